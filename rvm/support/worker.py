"""The worker process of a WorkerPool: ``python -m rvm.support.worker READ_FD WRITE_FD``.

Once started (its imports done) it writes ``("ready", None)``; then it reads
``(function, args)`` jobs from READ_FD (a module-level function travels as its
name and is imported here), runs them and writes
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
import os
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection

def serve(reader, writer):
    """Answers jobs until the reader reaches end of file."""
    while True:
        try:
            func, args = reader.recv()
        except EOFError:
            return
        except Exception as err:  # the job's function or arguments do not unpickle here
            writer.send(("error", f"the job could not be read: {type(err).__name__}: {err}"))
            continue
        try:
            answer = ("ok", func(*args))
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
