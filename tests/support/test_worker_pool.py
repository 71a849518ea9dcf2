"""WorkerPool: jobs run in worker processes; timeouts and crashes are results, not raises."""
import builtins
import doctest
import math
import os
import subprocess
import sys
import time

import pytest

from rvm.support import worker_pool
from rvm.support.worker_pool import WorkerPool


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(max_workers=2) as p:
        yield p


def test_map_keeps_order(pool):
    results = pool.map(math.pow, [(2, k) for k in range(6)], timeout_sec=30)
    assert [r.value for r in results] == [2.0 ** k for k in range(6)]
    assert all(r.ok for r in results)


def test_an_exception_is_a_failed_result(pool):
    result = pool.run(math.sqrt, ("four",), timeout_sec=30)
    assert not result.ok
    assert result.error.startswith("TypeError:")


def test_a_job_past_its_time_limit_is_killed_and_the_pool_goes_on(pool):
    result = pool.run(time.sleep, (60,), timeout_sec=0.5)
    assert not result.ok and result.error == "timed out after 0.5 s"
    assert pool.run(math.sqrt, (16.0,), timeout_sec=30).value == 4.0


def test_a_crashed_worker_is_reported_with_its_signal(pool):
    result = pool.run(os.abort, (), timeout_sec=30)
    assert not result.ok
    assert result.error == "crashed: the worker process was killed by SIGABRT"
    assert pool.run(os.getpid, (), timeout_sec=30).value != os.getpid()


def test_an_exiting_worker_is_reported_with_its_status(pool):
    result = pool.run(sys.exit, (3,), timeout_sec=30)
    assert result.error == "crashed: the worker process exited with status 3"


def test_workers_do_not_share_stdout_with_the_protocol(pool):
    # A job printing to stdout must not corrupt the answer.
    assert pool.run(builtins.print, ("noise",), timeout_sec=30).ok


def test_a_job_that_does_not_pickle_is_refused_before_it_is_sent(pool):
    with pytest.raises(TypeError, match="a job is a module-level function"):
        pool.run(lambda: 1, (), timeout_sec=30)
    assert pool.run(math.sqrt, (4.0,), timeout_sec=30).value == 2.0  # the pipe is intact


def test_a_job_the_worker_cannot_import_is_a_failed_result(pool, tmp_path, monkeypatch):
    # A function of a module the parent can import but the worker cannot.
    (tmp_path / "only_here.py").write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here

    result = pool.run(only_here.f, (), timeout_sec=30)
    assert not result.ok and result.error.startswith("the job could not be read: "), result
    assert pool.run(math.sqrt, (9.0,), timeout_sec=30).value == 3.0


def test_the_docstring_example_runs():
    assert doctest.testmod(worker_pool).failed == 0


def test_bad_size():
    with pytest.raises(ValueError, match="max_workers >= 1"):
        WorkerPool(0)


def test_a_slow_worker_start_does_not_count_against_the_job(tmp_path):
    # sitecustomize runs before the worker's imports: a start-up of 1.5 s, a limit of 0.5 s
    (tmp_path / "sitecustomize.py").write_text("import time\ntime.sleep(1.5)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    with WorkerPool(max_workers=1, env=env) as slow:
        result = slow.run(math.sqrt, (9.0,), timeout_sec=0.5)
    assert result.ok and result.value == 3.0


def test_a_worker_does_not_outlive_its_pool_process(tmp_path):
    # A pool's process killed while its worker hangs in a job (as when Ray kills an
    # actor that is measuring a hanging candidate): the worker goes too.
    pid_file = tmp_path / "worker.pid"
    script = (
        "import os, sys, threading, time\n"
        "from rvm.support.worker_pool import WorkerPool\n"
        "pool = WorkerPool(max_workers=1)\n"
        "assert pool.run(os.getpid, (), timeout_sec=60).ok\n"
        "worker = pool._idle[0]\n"
        f"open({str(pid_file)!r}, 'w').write(str(worker.proc.pid))\n"
        "pool.run(time.sleep, (600,), timeout_sec=600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the pool never started its worker"
            assert parent.poll() is None, "the pool process stopped early"
            time.sleep(0.05)
        worker_pid = int(pid_file.read_text())
        os.kill(worker_pid, 0)  # alive, hanging in time.sleep(600)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _running(worker_pid):
        assert time.monotonic() < deadline, "the worker outlived its pool's process"
        time.sleep(0.05)


def _running(pid):
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
