"""The worker process of a WorkerPool: ``python -m rvm.meta_schedule.worker READ_FD WRITE_FD``.

Once started (its imports done) it writes ``("ready", None)``; then it reads
``("module:function", args)`` jobs from READ_FD, runs them and writes
``("ok", value)`` or ``("error", reason)`` to WRITE_FD, until READ_FD closes.
A reason is the exception's type, message and line, or its message alone
when the exception class sets ``plain_message = True``.
Jobs talk over these descriptors only, so a kernel printing to stdout cannot
corrupt the protocol.

A worker never outlives the process that started it: a watchdog thread sees
the parent go (the worker is re-parented) and kills the worker's process
group, a job that hangs in a kernel and any compiler it started included.
Without it, a pool whose process is killed (a Ray actor, Ctrl-C on the
tuner) would leave a hanging candidate running until the machine stops.
"""
import importlib
import os
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection

_FUNCTIONS = {}


def _resolve(name):
    func = _FUNCTIONS.get(name)
    if func is None:
        module, _, attr = name.partition(":")
        func = _FUNCTIONS[name] = getattr(importlib.import_module(module), attr)
    return func


def serve(reader, writer):
    """Answers jobs until the reader reaches end of file."""
    while True:
        try:
            name, args = reader.recv()
        except EOFError:
            return
        try:
            answer = ("ok", _resolve(name)(*args))
        except Exception as err:  # reported to the pool, which records the failure
            if getattr(err, "plain_message", False):  # the message says it all
                writer.send(("error", str(err)))
                continue
            frames = traceback.extract_tb(err.__traceback__)[1:]  # below serve()
            where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            answer = ("error", f"{type(err).__name__}: {err}{where}")
        writer.send(answer)


def watch_parent(parent_pid, interval_sec=0.5):
    """Kills this worker's process group once ``parent_pid`` is no longer its parent."""
    while os.getppid() == parent_pid:
        time.sleep(interval_sec)
    os.killpg(os.getpgid(0), signal.SIGKILL)


def main(argv):
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    reader = Connection(int(argv[1]), writable=False)
    writer = Connection(int(argv[2]), readable=False)
    writer.send(("ready", None))
    serve(reader, writer)


if __name__ == "__main__":
    main(sys.argv)
