"""Runs ``python -c CODE ARGS...`` in a fresh process forked from a server that has already
imported numpy and rvm, instead of starting an interpreter and importing them for each run
(about 0.45 s of CPU each, most of an attack run).

The server is a single-threaded process started on first use with this process's
environment; for each job it forks a child that points stdin at /dev/null and stdout and
stderr at files, sets the job's environment and ``sys.argv``, and runs the code as
``__main__``. A crash, a hang or a side effect stays in that child, as in a subprocess:
the server reports the child's exit status (negative: killed by that signal), and a child
still running at the timeout is killed and ``subprocess.TimeoutExpired`` raised, as
``subprocess.run`` does. A job whose environment changes what the interpreter or rvm
read at start-up (``PYTHON*``, ``RVM_*``, ``LD_*``) runs in a real subprocess instead.
"""
import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap

_SERVER = textwrap.dedent("""
    import json, os, sys, traceback
    import numpy, rvm
    from rvm import relax  # what every attack run imports, imported once here

    requests, replies = sys.stdin, os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)

    def child(job):
        os.dup2(devnull, 0)
        for fd, path in ((1, job["out"]), (2, job["err"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        os.close(replies)
        os.environ.clear()
        os.environ.update(job["env"])
        sys.argv = ["-c"] + job["argv"]
        status = 0
        try:
            exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as err:
            if err.code is None or isinstance(err.code, int):
                status = err.code or 0
            else:
                print(err.code, file=sys.stderr)
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    for line in requests:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            child(job)
        os.write(replies, f"{pid}\\n".encode())
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        os.write(replies, f"{code}\\n".encode())
""")
_STARTUP_PREFIXES = ("PYTHON", "RVM_", "LD_")
_server = {}


def _start(env):
    proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    _server.update(proc=proc, env=env, pending=b"")
    atexit.register(_stop)
    return proc


def _stop():
    proc = _server.pop("proc", None)
    if proc is not None:
        proc.stdin.close()  # the server ends at end of file
        proc.wait(timeout=30)


def _forkable(env):
    base = _server.get("env", env)
    keys = set(env) | set(base)
    return all(env.get(k) == base.get(k) for k in keys if k.startswith(_STARTUP_PREFIXES))


def run_python(code, argv, env, timeout):
    """``subprocess.run([python, "-c", code, *argv], env=env, timeout=timeout)`` with its
    output captured as text, run in a child forked from the server; a CompletedProcess."""
    args = [sys.executable, "-c", code, *argv]
    proc = _server.get("proc")
    if proc is not None and proc.poll() is not None:
        _server.clear()
        proc = None
    if not _forkable(env):
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    if proc is None:
        proc = _start(env)
    with tempfile.TemporaryDirectory(prefix="rvm-fork-") as tmp:
        out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        job = {"code": code, "argv": [str(a) for a in argv], "env": env, "out": out,
               "err": err}
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        pid = int(_reply(proc))
        try:
            returncode = int(_reply(proc, timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            _reply(proc)
            raise subprocess.TimeoutExpired(args, timeout) from None
        with open(out) as f_out, open(err) as f_err:
            return subprocess.CompletedProcess(args, returncode, f_out.read(), f_err.read())


def _reply(proc, timeout=None):
    """The server's next line (read unbuffered from its pipe, so a line already received is
    never left in a buffer while waiting for the pipe); TimeoutExpired after ``timeout``."""
    fd = proc.stdout.fileno()
    while b"\n" not in _server["pending"]:
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("fork server", timeout)
        data = os.read(fd, 4096)
        if not data:
            _server.clear()
            raise RuntimeError(f"the fork server ended (exit status {proc.wait()})")
        _server["pending"] += data
    line, _server["pending"] = _server["pending"].split(b"\n", 1)
    return line.decode()
