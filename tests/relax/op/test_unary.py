import pytest

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
