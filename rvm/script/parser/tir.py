"""The ``T`` namespace of the script: ``from rvm.script import tir as T``.

``@T.prim_func`` parses the decorated function (TensorIR) from its source.
The other names are what TensorIR scripts write (``T.Buffer``, ``T.grid``,
``T.block``...); the parser reads them from the source and never calls
them, so here they only need to exist for Python to evaluate annotations.
The intrinsics (``T.exp``, ``T.max``...), the node classes (``T.Var``,
``T.IntImm``, ``T.FloatImm``...), the dtypes (``T.int32(5)`` is a constant,
``T.int32()`` a fresh variable), ``T.meta_var`` and TVM's ``T.tvm_*``/GPU
intrinsics (``tir_intrinsics``) also work from plain Python, as in TVM.

>>> from rvm.script import tir as T
>>> @T.prim_func
... def add_one(A: T.Buffer((4,), "float32")):
...     for i in range(4):
...         A[i] = A[i] + T.float32(1)
>>> add_one.attrs["global_symbol"]
'add_one'
"""
from rvm.tir import expr as _e
from rvm.tir.expr import Cast as _Cast, Select as _Select
from rvm.ir.type import PointerType as _PointerType, PrimType as _PrimType
from rvm.tir import op as _op
from rvm.tir.buffer import decl_buffer as _decl_buffer
from rvm.script._decorators import Annotation, function_decorator, frame_depth_env
from rvm.script.parser.tir_builtins import DTYPES as _DTYPES, TIR_TABLE as _TABLE
from rvm.script.parser.tir_intrinsics import FUNCTIONS as _INTRINSICS, meta_var


def prim_func(func=None, **options):
    """Decorator: the PrimFunc of a TensorIR function (``private=True`` drops its symbol)."""
    return function_decorator("prim_func", func, options, frame_depth_env(1))


def _scalar(dtype):
    def make(value=None, is_size_var=False):
        """A constant of this dtype, a cast of an expression, or (without a value) a fresh
        variable of this dtype, as TVM's ``T.int32()``."""
        if value is None:
            return (_e.SizeVar if is_size_var else _e.Var)("", dtype)
        if isinstance(value, _e.PrimExpr):
            return _op.cast(value, dtype)
        return _op.const(value, dtype)

    make.__name__ = dtype
    return make


for _dtype in _DTYPES:
    globals()[_dtype] = _scalar(_dtype)

class _BufferAnnotation(Annotation):
    """``T.Buffer``: an annotation for the parser; called from Python with the arguments of
    ``tir.decl_buffer`` (``T.Buffer((128, 128), "float32")``) it is that Buffer, as in TVM.
    Arguments only the parser understands (names of the function) keep the annotation."""

    def __call__(self, *args, **kwargs):
        try:
            return _decl_buffer(*args, **kwargs)
        except (TypeError, ValueError):
            return Annotation(self.name, args, kwargs)


class _HandleAnnotation(Annotation):
    """``T.handle``: an annotation for the parser; ``T.handle("float32", "global")`` called from
    Python is a handle Var pointing to that dtype in that storage scope, as in TVM."""

    def __call__(self, dtype=None, storage_scope="global", **kwargs):
        if isinstance(dtype, str) and isinstance(storage_scope, str) and not kwargs:
            try:
                return _e.Var("handle", _PointerType(_PrimType(dtype), storage_scope))
            except (TypeError, ValueError):
                pass
        return Annotation(self.name, (dtype, storage_scope), kwargs)


handle = _HandleAnnotation("handle")
Buffer = _BufferAnnotation("Buffer")
exp, log, sqrt, tanh, sigmoid, erf = _op.exp, _op.log, _op.sqrt, _op.tanh, _op.sigmoid, _op.erf
fabs, pow, if_then_else, call_packed = _op.fabs, _op.pow, _op.if_then_else, _op.call_packed
max, min, floordiv, floormod = _op.max, _op.min, _op.floordiv, _op.floormod
truncdiv, truncmod = _op.truncdiv, _op.truncmod
Cast = _Cast
Select = _Select
Var, SizeVar, IntImm, FloatImm, StringImm = _e.Var, _e.SizeVar, _e.IntImm, _e.FloatImm, _e.StringImm
Ramp, Broadcast, Let, Not = _e.Ramp, _e.Broadcast, _e.Let, _e.Not
call_extern, call_intrin, cast = _op.call_extern, _op.call_intrin, _op.cast
globals().update(_INTRINSICS)

# Script-only names (statements the parser understands): markers for Python.
for _name in _TABLE:
    if "." not in _name and _name not in globals():
        globals()[_name] = Annotation(_name)


class _Axis:
    """``T.axis``: its members (``T.axis.remap``, ``T.axis.spatial``...) are statement markers."""

    def __repr__(self):
        return "<T.axis>"


axis = _Axis()
for _name in _TABLE:
    if _name.startswith("axis."):
        setattr(axis, _name[len("axis."):], Annotation(_name))
