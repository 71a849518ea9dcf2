"""Runs ``python -c CODE ARGS...`` in a fresh process forked from a server that has already
imported what the code imports (numpy and rvm, by default), instead of starting an
interpreter and importing them for each run (about 0.45 s of CPU each, most of a short
run such as an attack file's load or a command of the ``rvm`` command line).

One server per set of ``preload`` modules is started on first use, single-threaded, with
the job's environment; for each job it forks a child that reads stdin from a file (or
/dev/null), points stdout and stderr at files, enters the job's directory, sets its
environment and ``sys.argv``, and runs the code as ``__main__``. A crash, a hang or a side
effect stays in that child, as in a subprocess: the server reports the child's exit status
(negative: killed by that signal), and a child still running at the timeout is killed and
``subprocess.TimeoutExpired`` raised, as ``subprocess.run`` does. A job whose environment
changes what the interpreter or rvm read at start-up (``PYTHON*``, ``RVM_*``, ``LD_*``)
runs in a real subprocess instead.
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
    import importlib, json, os, sys
    for name in sys.argv[1:]:  # what the jobs import, imported once here
        importlib.import_module(name)

    requests, replies = sys.stdin, os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)

    def child(job):
        os.dup2(os.open(job["in"], os.O_RDONLY) if job["in"] else devnull, 0)
        for fd, path in ((1, job["out"]), (2, job["err"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        os.close(replies)
        os.environ.clear()
        os.environ.update(job["env"])
        os.chdir(job["cwd"])
        sys.argv = ["-c"] + job["argv"]
        # an exception or sys.exit() leaves the server's loop too, so the child ends as an
        # interpreter does: traceback or exit status, atexit functions, threads joined
        exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
        sys.exit(0)

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
_servers = {}  # preload tuple -> {"proc", "env", "pending"}


def _start(preload, env):
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, *preload], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    if not _servers:
        atexit.register(_stop_all)
    server = _servers[preload] = {"proc": proc, "env": env, "pending": b""}
    return server


def _stop_all():
    for server in _servers.values():
        server["proc"].stdin.close()  # a server ends at end of file
    for server in _servers.values():
        server["proc"].wait(timeout=30)
    _servers.clear()


def _forkable(env, base):
    keys = set(env) | set(base)
    return all(env.get(k) == base.get(k) for k in keys if k.startswith(_STARTUP_PREFIXES))


def run_python(code, argv, env, timeout, cwd=None, stdin=None,
               preload=("numpy", "rvm", "rvm.relax")):
    """``subprocess.run([python, "-c", code, *argv], env=env, timeout=timeout, cwd=cwd,
    input=stdin)`` with its output captured as text, run in a child forked from the server
    that has imported ``preload``; a CompletedProcess."""
    args = [sys.executable, "-c", code, *argv]
    preload = tuple(preload)
    server = _servers.get(preload)
    if server is not None and server["proc"].poll() is not None:
        del _servers[preload]
        server = None
    if not _forkable(env, server["env"] if server else env):
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=cwd, input=stdin)
    if server is None:
        server = _start(preload, env)
    proc = server["proc"]
    with tempfile.TemporaryDirectory(prefix="rvm-fork-") as tmp:
        out, err, given = (os.path.join(tmp, name) for name in ("stdout", "stderr", "stdin"))
        if stdin is not None:
            with open(given, "w") as f:
                f.write(stdin)
        job = {"code": code, "argv": [str(a) for a in argv], "env": env, "out": out,
               "err": err, "in": given if stdin is not None else None,
               "cwd": os.path.abspath(cwd or os.getcwd())}
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        pid = int(_reply(server))
        try:
            returncode = int(_reply(server, timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            _reply(server)
            raise subprocess.TimeoutExpired(args, timeout) from None
        with open(out) as f_out, open(err) as f_err:
            return subprocess.CompletedProcess(args, returncode, f_out.read(), f_err.read())


def _reply(server, timeout=None):
    """The server's next line (read unbuffered from its pipe, so a line already received is
    never left in a buffer while waiting for the pipe); TimeoutExpired after ``timeout``."""
    proc = server["proc"]
    fd = proc.stdout.fileno()
    while b"\n" not in server["pending"]:
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("fork server", timeout)
        data = os.read(fd, 4096)
        if not data:
            _servers.pop(next(k for k, v in _servers.items() if v is server), None)
            raise RuntimeError(f"the fork server ended (exit status {proc.wait()})")
        server["pending"] += data
    line, server["pending"] = server["pending"].split(b"\n", 1)
    return line.decode()
