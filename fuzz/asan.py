"""Kernels compiled under AddressSanitizer for a fuzz campaign.

``asan_env(directory, memory_mb)`` writes a compiler wrapper (set as ``RVM_CC``) that adds
``-fsanitize=address -fno-omit-frame-pointer -O1`` to every compile (``-O1``, the usual
setting of sanitizer fuzzing, comes last so it overrides rvm's ``-O3``: a mutant's compile
takes a fraction of the time), runs the compiler without the preloaded runtime and under
an address-space limit, and gives the environment of a child process: libasan preloaded
(Python itself is not instrumented, the kernels are) and ``ASAN_OPTIONS`` making a report
exit with ``ASAN_EXIT`` and write its text to ``<directory>/asan.<pid>``.

``started_under_asan()``, called first thing in a child, takes ``LD_PRELOAD`` out of the
child's environment once the runtime is loaded: a program the child starts (the compiler
of an untrusted kernel, which rvm runs under an address-space limit) would otherwise load
libasan too, fail to reserve its shadow memory under that limit and abort before
compiling anything.
"""
import ctypes
import os
import shutil
import subprocess

ASAN_EXIT = 86
_OOB_SOURCE = """
#include <stdlib.h>
int rvm_fuzz_oob_write(int past) {
  volatile char* p = (volatile char*)malloc(16);
  p[16 + past] = 1;  /* one byte past the end of the block */
  int first = p[0];
  free((void*)p);
  return first;
}
"""


def libasan(cc="gcc"):
    """The path of the compiler's libasan.so, or None when it has none."""
    try:
        out = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                             text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if os.path.isabs(out) and os.path.exists(out) else None


def asan_env(directory, memory_mb, cc=None):
    """Environment variables of an ASan child (see the module docstring)."""
    cc = shutil.which(cc or os.environ.get("RVM_CC") or os.environ.get("CC") or "gcc")
    lib = libasan(cc)
    if lib is None:
        raise RuntimeError(f"--asan: the compiler '{cc}' has no libasan.so")
    wrapper = os.path.join(directory, "asan-cc")
    with open(wrapper, "w") as f:
        # env drops the preloaded runtime before the shell starts: limits set in an
        # ASan process would make its own allocator fail
        f.write("#!/usr/bin/env -S -u LD_PRELOAD /bin/sh\n"
                f"ulimit -v {memory_mb * 1024} 2>/dev/null\n"
                f"exec {cc} \"$@\" -fsanitize=address -fno-omit-frame-pointer -O1\n")
    os.chmod(wrapper, 0o755)
    options = [f"exitcode={ASAN_EXIT}", "detect_leaks=0", "allocator_may_return_null=1",
               f"hard_rss_limit_mb={memory_mb}", f"log_path={os.path.join(directory, 'asan')}",
               "handle_abort=1"]
    return {"RVM_CC": wrapper, "LD_PRELOAD": lib, "ASAN_OPTIONS": ":".join(options)}


def started_under_asan():
    """In a child started with ``asan_env``: drops ``LD_PRELOAD`` from the environment the
    child's own subprocesses inherit (see the module docstring); True when it was set."""
    return os.environ.pop("LD_PRELOAD", None) is not None


def inject_oob_write():
    """Compiles (with the campaign's compiler) and calls a function writing one byte past a
    heap block: under ASan the process reports it and exits with ASAN_EXIT."""
    from rvm.runtime.compiler import default_compiler
    library = default_compiler().compile(_OOB_SOURCE, use_openmp=False)
    return ctypes.CDLL(str(library.path)).rvm_fuzz_oob_write(0)
