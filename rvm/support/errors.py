"""Exception types shared by every layer; ``rvm.error`` names them for users.

Every exception class of rvm derives from ``RVMError`` (TVM's ``TVMError``).
Classes that also mean a standard Python error keep that base too (a damaged
executable file is an ``RVMError`` and a ``ValueError``), so code written
against either catches them.
"""


class RVMError(RuntimeError):
    """An error reported by the native runtime or a packed function without a more specific type;
    the base class of every rvm exception."""


# TVM's name of the base class, so ``except tvm.TVMError`` written for TVM catches rvm's errors.
TVMError = RVMError


class DiagnosticError(RVMError):
    """A program rejected with a diagnostic that points at its source (script parse errors)."""


class InternalError(RVMError):
    """A broken invariant inside rvm (a bug, not bad input)."""


class StructInfoError(RVMError, ValueError):
    """A call whose arguments its operator or callee rejects while inferring the struct info of
    the result (TVM raises its ``TVMError``); a ValueError too."""


class StructInfoTypeError(RVMError, TypeError):
    """A call whose arguments have a kind its operator rejects while inferring the struct info
    of the result (a shape where a tensor is expected); a TypeError too."""


class OpError(RVMError):
    """An operator an importer or a pass cannot handle."""


class OpNotImplemented(OpError, NotImplementedError):
    """An operator that has no implementation (for an importer: a framework op it cannot map)."""


class OpAttributeRequired(OpError, AttributeError):
    """An operator call without an attribute it needs."""


class OpAttributeInvalid(OpError, AttributeError):
    """An operator call with an attribute value out of its domain."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An operator attribute value that is valid but not supported."""
