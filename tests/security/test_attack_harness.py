"""The attack harness itself: an honest file re-serialized through it runs on both engines,
and a damaged one is reported as a load error, not a crash; the fork runner the runs go
through reports what a subprocess would (exit status, signal, output, timeout)."""
import os
import signal
import subprocess

import numpy as np
import pytest

from rvm import relax
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, environment, kernel_tir, run_untrusted, \
    with_kernels
from tests.fork_runner import run_python


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("harness") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


@pytest.mark.parametrize("engine", ENGINES)
def test_an_honest_file_through_the_harness_runs(saved, tmp_path, engine):
    path = tmp_path / "same.rvm"
    path.write_bytes(with_kernels(saved, funcs=kernel_tir(saved)))
    result = run_untrusted(path, [np.arange(8, dtype="float32")], engine=engine)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RAN [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]" in result.stdout


def test_damaged_tir_is_reported_as_a_load_error(saved, tmp_path):
    path = tmp_path / "bad.rvm"
    path.write_bytes(with_kernels(saved, tir=b"\x93garbage"))
    result = run_untrusted(path, [np.arange(8, dtype="float32")])
    assert result.returncode == 3 and "LOAD-ERROR" in result.stdout, result.stdout


def test_the_fork_runner_reports_signals_exit_codes_and_output_as_a_subprocess_would():
    env = environment({"CANARY": "seen"})
    code = ("import os, sys\nprint(sys.argv[1:], os.environ['CANARY'])\n"
            "print('to stderr', file=sys.stderr)\nos.environ['CANARY'] = 'changed'\n"
            "sys.exit(int(sys.argv[1]))\n")
    done = run_python(code, ["7"], env, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (7, "['7'] seen\n", "to stderr\n")
    again = run_python(code, ["0"], env, timeout=60)  # the last child's change stayed there
    assert (again.returncode, again.stdout) == (0, "['0'] seen\n")
    crashed = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", [], env,
                         timeout=60)
    assert crashed.returncode == -signal.SIGSEGV
    raised = run_python("raise KeyError('boom')\n", [], env, timeout=60)
    assert raised.returncode == 1 and "KeyError: 'boom'" in raised.stderr
    ended = run_python("import atexit\natexit.register(print, 'at exit')\n", [], env, timeout=60)
    assert (ended.returncode, ended.stdout) == (0, "at exit\n")  # ends as an interpreter does


def test_the_fork_runner_kills_a_child_at_the_timeout_and_goes_on():
    env = environment()
    with pytest.raises(subprocess.TimeoutExpired):
        run_python("import time\ntime.sleep(600)\n", [], env, timeout=0.5)
    assert run_python("print('next')\n", [], env, timeout=60).stdout == "next\n"


def test_an_environment_rvm_reads_at_start_up_gets_a_real_subprocess():
    parent = "import os\nprint(os.getppid())\n"
    forked = run_python(parent, [], environment(), timeout=60)
    assert int(forked.stdout) != os.getpid()  # the server's child
    started = run_python(parent, [], environment({"RVM_CC": "another-cc"}), timeout=60)
    assert int(started.stdout) == os.getpid()
