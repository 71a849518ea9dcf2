"""The main job of the README runs end to end (training, build, VM, export, reload)."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mlp_digits.py"


def test_mlp_digits_example_runs():
    pytest.importorskip("sklearn")
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rvm VM test accuracy" in out.stdout
    assert "reloaded: identical results" in out.stdout
    assert "batch 1" in out.stdout
