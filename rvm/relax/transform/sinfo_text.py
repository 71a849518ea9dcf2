"""Short text of struct info for error messages: ``float32[n, m]``, ``Shape[n, 4]``."""
from rvm.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, TensorStructInfo,
    TupleStructInfo,
)
from rvm.tir.expr_printer import dim_text


def _dims(values, ndim):
    if values is None:
        return "[" + ", ".join("?" * ndim) + "]" if ndim >= 0 else "[...]"
    return "[" + ", ".join(dim_text(v) for v in values) + "]"


def sinfo_text(sinfo):
    """``sinfo`` as users write it in error messages.

    >>> sinfo_text(TensorStructInfo((2, 3), "float32"))
    'float32[2, 3]'
    """
    if isinstance(sinfo, TensorStructInfo):
        dtype = str(sinfo.dtype) if sinfo.dtype is not None else "Tensor"
        return dtype + _dims(sinfo.shape_values, sinfo.ndim)
    if isinstance(sinfo, ShapeStructInfo):
        return "Shape" + _dims(sinfo.values, sinfo.ndim)
    if isinstance(sinfo, TupleStructInfo):
        return "Tuple(" + ", ".join(sinfo_text(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, PrimStructInfo):
        return str(sinfo.dtype) if sinfo.dtype is not None else "Prim"
    if isinstance(sinfo, FuncStructInfo):
        return "Callable"
    if isinstance(sinfo, ObjectStructInfo):
        return "Object"
    return type(sinfo).__name__
