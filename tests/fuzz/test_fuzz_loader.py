"""Short budgets of the fuzz harnesses (the long runs and their figures: RELIABILITY.md)."""
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("kind, seconds", [("parser", 4), ("loader", 20)])
def test_a_short_fuzz_run_finds_no_crash(kind, seconds, tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "fuzz" / "fuzz_loader.py"), kind,
                          "--seconds", str(seconds), "--crash-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    summary = json.loads(out.stdout)
    assert out.returncode == 0, out.stderr[-2000:]
    assert summary["crashes"] == summary["hangs"] == summary["harness_errors"] == 0
    assert summary["internal_errors"] == 0, summary["internal_kinds"]
    # The loader's child builds its seed executables first: under load it may not get further.
    assert summary["executions"] > 0 or kind == "loader"
