"""README's tour runs as written (in a fresh process, from a file like a user's script)."""
import pathlib
import os
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_tour_runs(tmp_path):
    text = README.read_text()
    code = re.search(r"## A tour\n\n```python\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "tour.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "[2. 4. 6. 8.]" in out.stdout
    assert (tmp_path / "module.rvm").exists()


def test_readme_opens_with_the_two_commands():
    text = README.read_text()
    commands = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    assert commands[:2] == ['pip install -e ".[examples]" && python examples/mlp_digits.py',
                            'pip install -e ".[dev]" && python -m pytest -q']
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_readme_debugging_session_runs(tmp_path):
    pytest.importorskip("sklearn")
    text = README.read_text()
    code = re.search(r"## Debugging a run\n.*?```python\n(.*?)```", text, re.S).group(1)
    script = tmp_path / "debug_session.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=str(README.parent))
    out = subprocess.run([sys.executable, str(script)], cwd=README.parent, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("[nonfinite] main@")
    assert lines[0].endswith(" (out) kernel linear1")
    shown = [line.lstrip("# ") for line in code.splitlines() if line.startswith("# ")]
    for line in lines[1:5]:       # the statistics are those the README shows
        assert line in shown, line
