"""What a default schedule needs to know of the CPU: vector width and cores.

``CPUInfo.host()`` reads the machine this process runs on (the C compiler is
driven with ``-march=native``): 64-byte vectors with AVX-512, 32 with AVX,
16 otherwise, and the cores the process may use. ``CPUInfo.from_target(target)``
reads a build's Target: the vector width of code compiled with its ``-mcpu`` /
``-mattr`` flags (asked of the C compiler), and its ``-num-cores``; what the
target leaves out is the host's.

>>> from rvm.target import Target
>>> CPUInfo.from_target(Target("llvm -mcpu=haswell -num-cores=1"))
CPUInfo(vector_bytes=32, cores=1)
"""
import functools
import os

from rvm.runtime.compiler import default_compiler
from rvm.runtime.data_type import DataType
from rvm.target.target import as_target


def _vector_bytes():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    if "avx512f" in flags:
                        return 64
                    if "avx" in flags:
                        return 32
                    break
    except OSError:
        pass
    return 16


class CPUInfo:
    """``vector_bytes``: the SIMD register width; ``cores``: the threads a kernel may use."""

    def __init__(self, vector_bytes=64, cores=1):
        if int(vector_bytes) < 4 or int(cores) < 1:
            raise ValueError(f"CPUInfo expects vector_bytes >= 4 and cores >= 1, got "
                             f"vector_bytes={vector_bytes!r}, cores={cores!r}")
        self.vector_bytes = int(vector_bytes)
        self.cores = int(cores)

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def host():
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
        return CPUInfo(_vector_bytes(), cores)

    @staticmethod
    def from_target(target, compiler=None):
        """The CPUInfo of ``target`` (a Target, str or None for the host); ``compiler`` (a
        rvm.runtime.compiler.Compiler, the default one if None) tells the vector width of
        its flags."""
        host = CPUInfo.host()
        if target is None:
            return host
        target = as_target(target)
        flags = target.compiler_flags()
        vector_bytes = (compiler or default_compiler()).vector_bytes(flags) if flags \
            else host.vector_bytes
        return CPUInfo(vector_bytes, target.num_cores or host.cores)

    def lanes(self, dtype):
        """Elements of ``dtype`` (a DataType or its name) in one vector register."""
        bits = DataType(str(dtype)).bits
        return max(1, self.vector_bytes * 8 // max(8, int(bits)))

    def __repr__(self):
        return f"CPUInfo(vector_bytes={self.vector_bytes}, cores={self.cores})"
