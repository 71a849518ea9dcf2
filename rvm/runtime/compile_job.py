"""The compile job of worker processes: C source in, a cached shared object's path out.

A builder's workers (``rvm.support.worker_pool``) import the module of each job's
function when its first job arrives, inside that job's time limit, and again in every
worker started after a compile timed out. This module imports only the C compiler
driver, so that costs a tenth of a second, not the half second of the tuner's
packages (seconds on a loaded machine).
"""
from rvm.runtime.compiler import Compiler, default_compiler


def compile_source(source, use_openmp, cc=None):
    """Compiles ``source`` through the kernel cache (with ``cc``, else the environment's
    compiler); the shared object's path, a str."""
    compiler = Compiler(cc) if cc else default_compiler()
    return str(compiler.compile(source, use_openmp=use_openmp).path)
