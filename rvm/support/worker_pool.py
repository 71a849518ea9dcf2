"""Worker processes that run jobs with a time limit and survive the jobs that kill them.

Builders and runners execute candidate kernels, and a candidate may crash
its process (an out-of-bounds write), loop forever or print to stdout. Each
job therefore runs in a separate long-lived Python process
(``python -m rvm.support.worker``) that talks to the pool over its own
pipe: a job that takes longer than its limit gets its worker killed, a job
whose worker dies is reported with the signal, and the next job starts a
fresh worker. A job's time limit starts once its worker has started (a fresh
worker's imports take seconds on a loaded machine). Workers are started with
the interpreter and never re-import the user's ``__main__`` script (as
multiprocessing's spawn would).

>>> import math
>>> with WorkerPool(max_workers=1) as pool:
...     [r.value for r in pool.map(math.sqrt, [(4.0,), (9.0,)], timeout_sec=30)]
[2.0, 3.0]
"""
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection

# How long a fresh worker may take to import what it needs and say it is ready.
STARTUP_TIMEOUT_SEC = 120.0


class JobResult:
    """The outcome of one job: ``value`` when ``ok``, else ``error`` (a reason)."""

    __slots__ = ("ok", "value", "error", "seconds")

    def __init__(self, ok, value=None, error=None, seconds=0.0):
        self.ok = ok
        self.value = value
        self.error = error
        self.seconds = seconds

    def __repr__(self):
        return f"JobResult(ok={self.ok}, value={self.value!r}, error={self.error!r})"


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class _Worker:
    """One worker process and the two ends of its pipes."""

    def __init__(self, env):
        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()
        argv = [sys.executable, "-m", "rvm.support.worker", str(child_read), str(child_write)]
        # Its own session: killing it also kills what it started (a C compiler).
        self.proc = subprocess.Popen(argv, pass_fds=(child_read, child_write), env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     start_new_session=True)
        os.close(child_read)
        os.close(child_write)
        self.reader = Connection(parent_read, writable=False)
        self.writer = Connection(parent_write, readable=False)
        self.ready = False

    def _wait_ready(self):
        """None once the worker said it started, else the reason it did not."""
        if not self.reader.poll(STARTUP_TIMEOUT_SEC):
            self.kill()
            return f"the worker did not start within {STARTUP_TIMEOUT_SEC:g} s"
        try:
            self.reader.recv()
        except (EOFError, OSError):
            return self._death_reason()
        self.ready = True
        return None

    def run(self, func, args, timeout_sec):
        """Sends one job and waits for its answer; a JobResult (the worker may be dead after).
        The time limit starts when the worker has started (its imports are not the job's)."""
        if not self.ready:
            failure = self._wait_ready()
            if failure is not None:
                return JobResult(False, error=failure)
        start = time.perf_counter()
        try:
            self.writer.send((func, args))
        except (pickle.PicklingError, AttributeError, TypeError) as err:  # nothing was sent
            raise TypeError(f"a job is a module-level function with arguments that pickle, "
                            f"got {func!r}: {err}") from None
        except (BrokenPipeError, OSError):
            return JobResult(False, error=self._death_reason())
        if not self.reader.poll(timeout_sec):
            self.kill()
            return JobResult(False, error=f"timed out after {timeout_sec:g} s",
                             seconds=time.perf_counter() - start)
        try:
            status, payload = self.reader.recv()
        except (EOFError, OSError):
            return JobResult(False, error=self._death_reason(),
                             seconds=time.perf_counter() - start)
        seconds = time.perf_counter() - start
        if status == "ok":
            return JobResult(True, value=payload, seconds=seconds)
        return JobResult(False, error=payload, seconds=seconds)

    def _death_reason(self):
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "worker stopped answering"
        if code < 0:
            return f"crashed: the worker process was killed by {_signal_name(code)}"
        return f"crashed: the worker process exited with status {code}"

    @property
    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.close_pipes()

    def close_pipes(self):
        for conn in (self.reader, self.writer):
            try:
                conn.close()
            except OSError:
                pass

    def stop(self):
        """Asks the worker to exit (closing its input), killing it if it does not."""
        try:
            self.writer.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        self.close_pipes()


class WorkerPool:
    """Up to ``max_workers`` worker processes running jobs in parallel.

    ``env`` (a dict) replaces the workers' environment (default: this
    process's). Workers start on first use and are stopped by ``close()``
    (or leaving the ``with`` block).
    """

    def __init__(self, max_workers=1, env=None):
        if int(max_workers) < 1:
            raise ValueError(f"WorkerPool needs max_workers >= 1, got {max_workers}")
        self.max_workers = int(max_workers)
        self.env = dict(os.environ if env is None else env)
        self._idle = []
        self._lock = threading.Lock()
        self.started = 0  # worker processes started so far (crashes and timeouts restart one)

    def _take(self):
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.close_pipes()
            self.started += 1
        return _Worker(self.env)

    def _give_back(self, worker):
        if worker.alive:
            with self._lock:
                self._idle.append(worker)
        else:
            worker.close_pipes()

    def run(self, func, args, timeout_sec):
        """Runs ``func(*args)`` in a worker: a JobResult.

        ``func`` is a module-level function (the worker imports it by name); ``args`` must
        pickle.
        """
        worker = self._take()
        try:
            return worker.run(func, tuple(args), timeout_sec)
        finally:
            self._give_back(worker)

    def map(self, func, arg_tuples, timeout_sec):
        """Runs ``func(*args)`` for every tuple of ``arg_tuples``: JobResults in order."""
        arg_tuples = list(arg_tuples)
        results = [None] * len(arg_tuples)
        jobs = queue.Queue()
        for index, args in enumerate(arg_tuples):
            jobs.put((index, args))

        def drain():
            while True:
                try:
                    index, args = jobs.get_nowait()
                except queue.Empty:
                    return
                results[index] = self.run(func, args, timeout_sec)

        threads = [threading.Thread(target=drain, daemon=True)
                   for _ in range(min(self.max_workers, len(arg_tuples)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    def close(self):
        """Stops every idle worker."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass
