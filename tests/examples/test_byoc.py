"""The bring-your-own-codegen walkthrough runs end to end (offload, build, run, export,
reload in a fresh process)."""
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "byoc.py"


def test_byoc_example_runs(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE), "--work-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "import negsum: fused_relax_add_relax_negative" in out.stdout
    assert "matches numpy: True" in out.stdout
    assert "reloaded in a fresh process: True" in out.stdout
    assert (tmp_path / "model.rvm").exists()
