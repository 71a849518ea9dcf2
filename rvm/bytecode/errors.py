"""Errors of the bytecode layer."""
from rvm.support.errors import RVMError


class ExecutableFormatError(RVMError, ValueError):
    """A saved or built executable is malformed: bad header, damaged section, failed check.

    Every message says what was expected, what was found, and where (section,
    function, instruction).
    """


class BytecodeVerificationError(ExecutableFormatError):
    """The bytecode of an executable fails a verifier check (register, index, jump, RET, ...)."""
