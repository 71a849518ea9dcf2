"""The hardware fingerprint of a measurement: times from different machines never compare.

A fingerprint names the CPU model, the number of cores the process may use
and the C compiler with what ``-march=native`` means there, since all three
change a kernel's time. Runners record it with every measurement. The
compiler is given (``rvm.runtime.compiler.default_compiler()``, or anything
with a ``fingerprint``): this module reads the machine, not the toolchain.

>>> class NoCompiler:
...     fingerprint = property(lambda self: 1 / 0)
>>> hardware_fingerprint(NoCompiler()).endswith("cores | no C compiler (ZeroDivisionError)")
True
"""
import functools
import os
import platform


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _usable_cores():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@functools.lru_cache(maxsize=None)
def hardware_fingerprint(compiler):
    """``"<cpu model> | <n> cores | <compiler.fingerprint>"`` for this process's machine."""
    try:
        name = compiler.fingerprint
    except Exception as err:  # no compiler: the python target still measures
        name = f"no C compiler ({type(err).__name__})"
    return f"{_cpu_model()} | {_usable_cores()} cores | {name}"
