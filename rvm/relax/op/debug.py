"""Run-time printing and assertions: ``R.print`` and ``R.assert_op`` (TVM's ``relax.print`` and
``relax.assert_op``).

Both are impure and return nothing (an empty tuple). The VM runs them as the
registered functions ``relax.run.print`` and ``relax.run.assert_op``
(VMBuiltinLower), whose first arguments are the format string (and the
condition).

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((), "int32"))
>>> call = print(x, format="x = {}")
>>> call.op.name, call.attrs["format"]
('relax.print', 'x = {}')
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import Call, PrimValue, StringImm
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import PrimStructInfo, TensorStructInfo, TupleStructInfo


def _format_of(format, who):  # noqa: A002  (TVM's keyword)
    if isinstance(format, StringImm):  # TVM's printer writes format=R.str("...")
        format = format.value
    if not isinstance(format, str):
        raise TypeError(f"{who}: format must be a str, got {type(format).__name__}")
    return format


def _values(values, who):
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, int, float)):
            v = PrimValue(v)
        if not isinstance(v, RelaxExpr):
            raise TypeError(f"{who}: value {i} must be a Relax expression, got "
                            f"{type(v).__name__}")
        out.append(v)
    return out


def print(*values, format=""):  # noqa: A001,A002  (TVM's names)
    """Prints ``values`` at run time, through ``format.format(*values)`` when ``format`` is
    given (else separated by spaces)."""
    return Call(Op.get("relax.print"), _values(values, "relax.print"),
                {"format": _format_of(format, "relax.print")})


def assert_op(condition, format_args=None, format=""):  # noqa: A002  (TVM's keyword)
    """Raises AssertionError at run time unless ``condition`` (a boolean scalar tensor or
    R.Prim) holds; the message is ``format.format(*format_args)``."""
    if isinstance(format_args, RelaxExpr):
        format_args = [format_args]
    args = _values([condition] + list(format_args or ()), "relax.assert_op")
    return Call(Op.get("relax.assert_op"), args,
                {"format": _format_of(format, "relax.assert_op")})


def _infer_void(call, ctx):
    return TupleStructInfo([])


def _infer_assert(call, ctx):
    if not call.args:
        raise ValueError("relax.assert_op expects a condition")
    cond = call.args[0].struct_info_
    is_bool_tensor = isinstance(cond, TensorStructInfo) and cond.ndim in (0, -1) and \
        (cond.dtype is None or cond.dtype == "bool")
    is_bool_prim = isinstance(cond, PrimStructInfo) and (cond.dtype is None
                                                         or cond.dtype == "bool")
    if not (is_bool_tensor or is_bool_prim):
        raise ValueError(f"relax.assert_op: the condition must be a bool scalar (a 0-d "
                         f"tensor or R.Prim(\"bool\")), got {cond!r}")
    return TupleStructInfo([])


register_op("relax.print", _infer_void, purity=False, attrs={"format": ""},
            description="print values at run time")
register_op("relax.assert_op", _infer_assert, purity=False, attrs={"format": ""},
            description="raise at run time unless the condition holds")
