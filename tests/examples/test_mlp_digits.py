"""The main job of the README runs end to end (training, build, VM, export, reload, tuning
with a budget kept in a work dir, tuned kernels swapped in)."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mlp_digits.py"


@pytest.mark.slow
def test_mlp_digits_example_runs(tmp_path):
    pytest.importorskip("sklearn")
    work_dir = tmp_path / "tuning"
    command = [sys.executable, str(EXAMPLE), "--work-dir", str(work_dir), "--trials", "4"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rvm VM test accuracy" in out.stdout
    assert "reloaded: identical results" in out.stdout
    assert "same predictions" in out.stdout
    assert "default/numpy" in out.stdout and "tuned/numpy" in out.stdout
    assert "batch 450" in out.stdout
    records = (work_dir / "database_tuning_record.json").read_text()
    # 4 trials of each of 4 kernels (and lines adding times of each one's best, measured
    # again at the end of the run)
    assert len([r for r in records.splitlines() if '"remeasured":true' not in r]) == 4 * 4
    # A second run finds the records: nothing is measured again.
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work_dir / "database_tuning_record.json").read_text() == records
