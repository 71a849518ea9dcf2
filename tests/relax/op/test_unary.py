import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op import unary
from rvm.relax.struct_info import TensorStructInfo


def test_same_struct_info(infer):
    sinfo = TensorStructInfo((2, 3), "float32")
    for build in (unary.exp, unary.log, unary.sqrt, unary.rsqrt, unary.tanh, unary.sigmoid,
                  unary.negative, unary.abs):
        assert infer(build(Var("x", sinfo))) is sinfo


def test_float_only(infer):
    with pytest.raises(ValueError, match="relax.exp expects a float tensor, got int32"):
        infer(unary.exp(Var("x", TensorStructInfo((2,), "int32"))))
    assert infer(unary.negative(Var("x", TensorStructInfo((2,), "int32")))).dtype == "int32"


def test_astype(infer):
    s = infer(unary.astype(Var("x", TensorStructInfo((2, 3), "float32")), "float16"))
    assert s.dtype == "float16" and s.ndim == 2
    assert infer(unary.astype(Var("y", TensorStructInfo(ndim=3)), "int8")).ndim == 3


def test_every_unary_op_keeps_symbolic_shapes(infer):
    n = tir.Var("n", "int64")
    sinfo = TensorStructInfo((n, 3), "float32")
    for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf",
                 "floor", "round", "sign", "sin", "sinh", "square", "tan"):
        out = infer(getattr(unary, name)(Var("x", sinfo)))
        assert out is sinfo, name


def test_predicates_give_bool_and_logical_not_needs_bool(infer):
    n = tir.Var("n", "int64")
    for build in (unary.isnan, unary.isinf, unary.isfinite):
        out = infer(build(Var("x", TensorStructInfo((n, 2), "float32"))))
        assert out.dtype == "bool" and out.shape_values[0] is n
    assert infer(unary.isnan(Var("x", TensorStructInfo(ndim=2)))).ndim == 2
    assert infer(unary.logical_not(Var("b", TensorStructInfo((2,), "bool")))).dtype == "bool"
    with pytest.raises(ValueError, match="relax.logical_not expects a bool tensor, got float32"):
        infer(unary.logical_not(Var("x", TensorStructInfo((2,), "float32"))))
    with pytest.raises(ValueError, match="relax.sin expects a float tensor, got int64"):
        infer(unary.sin(Var("x", TensorStructInfo((2,), "int64"))))


def test_clip(infer):
    n = tir.Var("n", "int64")
    sinfo = TensorStructInfo((n, 2), "float32")
    call = unary.clip(Var("x", sinfo), 0.0, 6.0)
    assert infer(call) is sinfo
    assert [type(a).__name__ for a in call.args[1:]] == ["PrimValue", "PrimValue"]
    with pytest.raises(TypeError, match="relax.clip: 'max' must be an int, a float or a "
                                        "PrimValue, got str"):
        unary.clip(Var("x", sinfo), 0, "6")
    from rvm.relax.expr import Call
    from rvm.relax.op.registry import Op
    bad = Call(Op.get("relax.clip"), [Var("x", sinfo), Var("y", sinfo), Var("z", sinfo)])
    with pytest.raises(ValueError, match="relax.clip: argument 'min' must be a scalar"):
        infer(bad)
