"""From a TE function applied to Relax values to a PrimFunc plus its call_tir arguments.

Used by ``BlockBuilder.emit_te``/``call_te``: each tensor-valued Relax
argument becomes a ``te.placeholder`` of its (possibly symbolic) shape, the
TE function runs on the placeholders, and ``te.create_prim_func`` turns
placeholders and results into a kernel. Symbolic variables that no input
shape has as a dimension of its own (those only in the results' shapes, only
inside expressions such as ``n * n``, or in TIR values passed as arguments,
including an ``R.Prim(value=n)`` variable's) become extra integer parameters
(call_tir's tir_vars).
"""
import inspect
import string

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars
from rvm.relax.expr import PrimValue, ShapeExpr, Tuple, TupleGetItem, Var
from rvm.relax.struct_info import PrimStructInfo, TensorStructInfo, TupleStructInfo
from rvm.te.create_prim_func import create_prim_func
from rvm.te.operation import placeholder
from rvm.te.tensor import Tensor
from rvm.tir.expr import Var as TirVar


def _param_names(func):
    try:
        return [p.name for p in inspect.signature(func).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _unnamed_label(index):
    """The placeholder name TVM gives the ``index``-th tensor input that is not a variable
    (a constant): A, B, ... Z, then tensor_input_<index>."""
    if index < len(string.ascii_uppercase):
        return string.ascii_uppercase[index]
    return f"tensor_input_{index}"


class _ArgConverter:
    """Turns Relax arguments into TE values, remembering the placeholders it made."""

    def __init__(self, bb, who):
        self.bb = bb
        self.who = who
        self.placeholders = []
        self.relax_args = []
        self.prim_args = []  # TIR expressions passed as they are (TVM's extra tir args)
        self._by_expr = {}

    def convert(self, value, name):
        if isinstance(value, (list, tuple)):
            return type(value)(self.convert(v, f"{name}_{i}") for i, v in enumerate(value))
        if isinstance(value, dict):
            return {k: self.convert(v, k) for k, v in value.items()}
        if isinstance(value, PrimExpr):  # a symbolic value the kernel may need passed
            self.prim_args.append(value)
            return value
        if not isinstance(value, RelaxExpr):
            return value
        if isinstance(value, ShapeExpr):
            return [self.convert(v, name) for v in value.values]
        if isinstance(value, PrimValue):
            return self.convert(value.value, name)
        value = self.bb.normalize_argument(value)
        sinfo = value.struct_info_
        if isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
            return self.convert(sinfo.value, name)  # R.Prim(value=n): the kernel gets n
        if isinstance(value, Tuple):
            return [self.convert(f, f"{name}_{i}") for i, f in enumerate(value.fields)]
        if isinstance(sinfo, TupleStructInfo):  # a tuple-valued variable: one item each
            return [self.convert(TupleGetItem(value, i), f"{name}_{i}")
                    for i in range(len(sinfo.fields))]
        if not isinstance(sinfo, TensorStructInfo):
            raise TypeError(f"{self.who}: argument '{name}' must be a tensor, got {sinfo!r}")
        if id(value) in self._by_expr:
            return self._by_expr[id(value)]
        shape = sinfo.shape_values
        label = value.name_hint if isinstance(value, Var) else _unnamed_label(
            len(self.placeholders))
        if shape is None or sinfo.dtype is None:
            raise ValueError(f"{self.who}: argument '{label}' needs a known shape and dtype to "
                             f"become a te.placeholder; got {sinfo!r}")
        tensor = placeholder(shape, dtype=sinfo.dtype, name=label)
        self._by_expr[id(value)] = tensor
        self.placeholders.append(tensor)
        self.relax_args.append(value)
        return tensor


def lower_te_call(bb, func, args, kwargs):
    """``(prim_func, relax_args, out_sinfo, tir_vars)`` for ``func(*args, **kwargs)``."""
    who = f"emit_te({getattr(func, '__name__', func)!s})"
    if not callable(func):
        raise TypeError(f"emit_te expects a TE function (tensors -> tensor), got "
                        f"{type(func).__name__}")
    names = _param_names(func)
    conv = _ArgConverter(bb, who)
    te_args = [conv.convert(a, names[i] if i < len(names) else "rxplaceholder")
               for i, a in enumerate(args)]
    te_kwargs = {k: conv.convert(v, k) for k, v in kwargs.items()}
    result = func(*te_args, **te_kwargs)
    outs = [result] if isinstance(result, Tensor) else list(result) if isinstance(
        result, (list, tuple)) else None
    if not outs or not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{who}: the function must return a te.Tensor or a list of them, got "
                        f"{type(result).__name__}")
    # A variable the kernel can read off an input's shape is a dimension by itself; any
    # other (in an output's shape, or only inside an expression such as n * n) is passed.
    defined = {id(d) for p in conv.placeholders for d in p.shape if isinstance(d, TirVar)}
    used = collect_tir_vars([list(t.shape) for t in conv.placeholders + outs] + conv.prim_args)
    tir_vars = [v for v in used if id(v) not in defined]
    # a kernel of the module is private: its name is the GlobalVar's, not a global symbol
    prim_func = create_prim_func(conv.placeholders + outs + tir_vars).without_attr(
        "global_symbol")
    out_sinfo = [TensorStructInfo(list(o.shape), o.dtype) for o in outs]
    return prim_func, Tuple(conv.relax_args), out_sinfo, tir_vars
