"""Tools for attack tests: edit the parts of a saved executable, then load and run it in a
fresh process (a crash, a hang or a side effect there cannot take the test run down).

Each test under tests/security/ builds its hostile file in the test, writes it to a
temporary directory and runs ``run_untrusted`` on both engines.
"""
import json
import os
import struct
import textwrap

from rvm.bytecode.serialize import dump_executable, undump_executable
from rvm.tir.serialize import load_prim_funcs, save_prim_funcs
from tests.fork_runner import run_python

ENGINES = ("native", "python")
_KERNEL_MAGIC = b"RVMCKL\x00\x01"


def split_kernel_library(blob):
    """The parts (header, C source, TIR, object) of a saved kernel library."""
    parts, offset = [], len(_KERNEL_MAGIC)
    while offset < len(blob):
        (size,) = struct.unpack_from("<Q", blob, offset)
        parts.append(blob[offset + 8:offset + 8 + size])
        offset += 8 + size
    return parts


def join_kernel_library(parts):
    return _KERNEL_MAGIC + b"".join(struct.pack("<Q", len(p)) + p for p in parts)


def kernel_tir(data):
    """[(name, PrimFunc)] of the (first) kernel library stored in executable bytes ``data``."""
    blob = next(b for _, k, b in undump_executable(data, "test")["modules"] if k == "c_kernels")
    return load_prim_funcs(split_kernel_library(blob)[2])


def with_kernels(data, funcs=None, tir=None, source=None, functions=None):
    """Executable bytes ``data`` with its kernel library's TIR replaced by ``funcs`` (a
    [(name, PrimFunc)] list, serialized here) or raw ``tir`` bytes; checksums are fixed."""
    if funcs is not None:
        tir = save_prim_funcs(funcs)
    parts = undump_executable(data, "test")
    modules = []
    for role, key, blob in parts["modules"]:
        if key == "c_kernels":
            head, src, old_tir, obj = split_kernel_library(blob)
            header = json.loads(head)
            if functions is not None:
                header["functions"] = functions
            blob = join_kernel_library([json.dumps(header).encode(),
                                        src if source is None else source.encode(),
                                        old_tir if tir is None else tir, obj])
        modules.append((role, key, blob))
    parts["modules"] = modules
    return dump_executable(parts)


_RUNNER = textwrap.dedent("""
    import sys, numpy as np, rvm
    from rvm import relax
    path, engine, func = sys.argv[1], sys.argv[2], sys.argv[3]
    inputs = [np.load(p) for p in sys.argv[4:]]
    try:
        ex = rvm.runtime.load_module(path)
    except Exception as err:
        print("LOAD-ERROR", type(err).__name__, err)
        sys.exit(3)
    vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine, **LIMITS)
    try:
        out = vm[func](*inputs)
    except Exception as err:
        print("RUN-ERROR", type(err).__name__, err)
        sys.exit(4)
    print("RAN", out.numpy().tolist() if hasattr(out, "numpy") else out)
""")


def run_untrusted(path, inputs=(), engine="native", func="main", timeout=60, env=None,
                  limits=None):
    """Loads ``path`` with ``load_module`` (no trust) and calls ``func(*inputs)`` on
    ``engine`` in a fresh process (forked from one that has imported rvm, see
    fork_runner); a CompletedProcess (returncode 0 ran, 3 load error, 4 run error,
    negative: killed by that signal). ``limits`` are VirtualMachine keyword arguments
    (memory_limit, step_limit, ...)."""
    import numpy as np
    directory = os.path.dirname(str(path))
    files = []
    for i, x in enumerate(inputs):
        name = os.path.join(directory, f"input{i}.npy")
        np.save(name, np.asarray(x))
        files.append(name)
    code = "LIMITS = " + repr(dict(limits or {})) + "\n" + _RUNNER
    return run_python(code, [str(path), engine, func, *files], environment(env), timeout)


def environment(env=None):
    """This process's environment with ``env`` added and this checkout first on the path:
    the environment of an attack run."""
    environ = dict(os.environ, **(env or {}))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environ["PYTHONPATH"] = root + os.pathsep + environ.get("PYTHONPATH", "")
    return environ
