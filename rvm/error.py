"""rvm.error: the exception types of rvm (TVM's ``tvm.error``), a facade over
rvm.support.errors.

>>> import rvm
>>> from rvm.script import from_source
>>> try:
...     from_source("@R.function\\ndef f(x):\\n    return x")
... except rvm.error.DiagnosticError as err:
...     print(isinstance(err, rvm.error.RVMError), err.lineno)
True 2
"""
from rvm.support.errors import (
    DiagnosticError, InternalError, OpAttributeInvalid, OpAttributeRequired,
    OpAttributeUnImplemented, OpError, OpNotImplemented, RVMError, StructInfoError,
    StructInfoTypeError, TVMError,
)

__all__ = ["DiagnosticError", "InternalError", "OpAttributeInvalid", "OpAttributeRequired",
           "OpAttributeUnImplemented", "OpError", "OpNotImplemented", "RVMError", "StructInfoError",
           "StructInfoTypeError", "TVMError"]
