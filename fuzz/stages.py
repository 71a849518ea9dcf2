"""Where an input stopped: the stage counts of a fuzz campaign, and which exceptions are
rvm's documented errors (anything else escaping the loader or the VM is an internal error).

Loader stages, in order: refused by a section checksum (``rejected_crc``), by the file or
TIR format (``rejected_format``), by the bytecode verifier (``rejected_verifier``), by the
TIR verifier of untrusted kernels (``rejected_tir_verifier``: typed lets and casts,
scopes, one dtype per memory, bounded unrolling), kernel TIR refused by the code generator
when its C is regenerated (``rejected_kernel``), the compiler stopped at its time limit
(``compile_limit``: a source too large to compile in the campaign's budget, not a
refusal), the compiler out of memory under the campaign's limit (``out_of_memory``: a
resource blow-up, not a refusal), ``loaded``; then per engine: refused when the VM links
the functions (``refused_at_link``), ``ran`` or ``ran_with_error``; then, when one engine
alone reached the time limit and both agree when run again with a larger one, ``timing``,
and when the engines' outcomes differ, ``engine_mismatch``. Parser stages:
Python's own syntax check (``python_syntax_error``), rvm's parser
(``rejected_by_parser``), ``parsed``.
"""
import os
import traceback

from rvm.bytecode.errors import BytecodeVerificationError, ExecutableFormatError
from rvm.runtime.compiler import CompileError
from rvm.support.errors import RVMError
from rvm.tir.analysis.verify_untrusted import UntrustedTIRError
from rvm.tir.serialize import TIRFormatError

LOADER_STAGES = ("rejected_crc", "rejected_format", "rejected_verifier",
                 "rejected_tir_verifier", "rejected_kernel", "compile_limit",
                 "out_of_memory", "loaded", "refused_at_link", "ran", "ran_with_error",
                 "timing", "engine_mismatch")
PARSER_STAGES = ("python_syntax_error", "rejected_by_parser", "parsed")
STAGES = LOADER_STAGES + PARSER_STAGES + ("internal_errors",)
# Modules whose own ValueErrors are documented load errors (damaged kernel library bytes,
# symbol tables, unknown module types).
_LOADER_FILES = (os.path.join("rvm", "runtime"), os.path.join("rvm", "bytecode"),
                 os.path.join("rvm", "codegen", "c", "load.py"))
_KERNEL_FILES = (os.path.join("rvm", "codegen"), os.path.join("rvm", "tir"))
# The run-time errors the VM documents: argument and shape checks (TypeError, ValueError),
# guarded kernel accesses (IndexError), memory_limit and impossible allocations
# (MemoryError), step_limit and call depth (RuntimeError, RecursionError), time_limit
# (TimeoutError), R.assert_op's failed assertion (AssertionError, also reached by a
# kernel's call_packed of relax.run.assert_op), rvm's own errors raised in kernels or
# builtins (RVMError).
RUN_ERRORS = (TypeError, ValueError, IndexError, MemoryError, RuntimeError, TimeoutError,
              AssertionError)
# Compiler failures (the first line of a CompileError) that are limits, not code
# generator bugs.
_COMPILE_LIMITS = ("memory limit", "size limit")
_COMPILE_TIME = ("timed out", "time limit")
_COMPILER_OOM = ("out of memory", "memory exhausted", "Cannot allocate memory")


class InternalError(Exception):
    """An exception that is not one of rvm's documented errors (``error`` holds it)."""

    def __init__(self, error, where):
        super().__init__(f"{where}: {type(error).__name__}: {error}")
        self.error = error
        self.where = where

    def key(self):
        text = str(self.error).splitlines()[0][:80] if str(self.error) else ""
        return f"{self.where}: {type(self.error).__name__}: {text}"

    def traceback(self):
        return "".join(traceback.format_exception(self.error))


# Loaders that turn any exception of an embedded module into their own error (the
# original stays the ``__context__``): the stage is decided by the exception they wrapped.
_WRAPPERS = ("cannot load module of type", "cannot regenerate its kernels from the stored")


def innermost(err):
    """The exception a catch-all loader wrapper (``_WRAPPERS``) re-raised as its own; an
    error a loader converted on purpose (e.g. a UnicodeDecodeError into a ValueError naming
    the section) is kept."""
    while any(w in str(err) for w in _WRAPPERS) and err.__context__ is not None:
        err = err.__context__
    return err


def _raised_in(err, directories):
    frames = traceback.extract_tb(err.__traceback__)
    return bool(frames) and any(d in frames[-1].filename for d in directories)


def load_stage(err):
    """The stage of an exception from ``Executable.from_bytes``; InternalError if it is not a
    documented load error."""
    root = innermost(err)
    if isinstance(root, BytecodeVerificationError):
        return "rejected_verifier"
    if isinstance(root, ExecutableFormatError):
        return "rejected_crc" if "checksum mismatch" in str(root) else "rejected_format"
    if isinstance(root, UntrustedTIRError):
        return "rejected_tir_verifier"
    if isinstance(root, TIRFormatError):
        return "rejected_format"
    if isinstance(root, RVMError) and isinstance(root, ValueError):
        return "rejected_kernel"  # the code generator or the TIR verifier refused the kernel
    if isinstance(root, CompileError) and any(w in str(root) for w in _COMPILER_OOM):
        return "out_of_memory"
    if isinstance(root, CompileError) and any(
            w in str(root).splitlines()[0] for w in _COMPILE_TIME):
        return "compile_limit"
    if isinstance(root, CompileError) and any(
            w in str(root).splitlines()[0] for w in _COMPILE_LIMITS):
        return "rejected_kernel"
    if isinstance(root, MemoryError):
        return "rejected_format"
    if type(root) is ValueError and _raised_in(root, _LOADER_FILES):
        return "rejected_format"
    if type(root) is ValueError and _raised_in(root, _KERNEL_FILES):
        return "rejected_kernel"  # a check of the code generator (e.g. an unbound variable)
    raise InternalError(root, "load")


def check_run_error(err, where):
    """None for a documented run-time error; raises InternalError for anything else."""
    if isinstance(err, RUN_ERRORS):
        return
    raise InternalError(err, where)
