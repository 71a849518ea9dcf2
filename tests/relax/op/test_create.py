import pytest

from rvm import tir
from rvm.relax.expr import Var, const
from rvm.relax.op import create
from rvm.relax.struct_info import TensorStructInfo

n = tir.Var("n", "int64")


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_full_and_like(infer):
    s = infer(create.full((n, 3), const(1.0, "float32")))
    assert s.shape_values[0] is n and s.dtype == "float32"
    assert infer(create.full((2,), 1, "float16")).dtype == "float16"
    assert infer(create.full_like(t((n, 2)), const(3, "int32"))).dtype == "float32"
    assert infer(create.full_like(t((n, 2)), 3, "int8")).dtype == "int8"
    with pytest.raises(ValueError, match="argument 'fill_value' must be a scalar"):
        infer(create.full((2,), t((2,))))
    with pytest.raises(TypeError, match="relax.full: 'dtype' must be a dtype"):
        create.full((2,), 1.0, "floaty")


def test_zeros_ones(infer):
    s = infer(create.zeros((n, 4), "int32"))
    assert s.shape_values[0] is n and s.dtype == "int32"
    assert dims(infer(create.ones([2, 3], "float32"))) == [2, 3]
    assert infer(create.ones_like(t((n,), "bool"))).dtype == "bool"
    assert infer(create.zeros_like(t(ndim=3), "float16")).ndim == 3
    with pytest.raises(ValueError, match="relax.zeros needs the attribute 'dtype'"):
        infer(create.zeros((2,), None))


def test_arange(infer):
    assert dims(infer(create.arange(5))) == [5] and infer(create.arange(5)).dtype == "int64"
    s = infer(create.arange(0.5, 3, 0.75))
    assert dims(s) == [4] and s.dtype == "float32"
    assert dims(infer(create.arange(10, 1, -3, "int32"))) == [3]
    assert dims(infer(create.arange(3, 1))) == [0]
    s = infer(create.arange(0, n, 2))
    assert repr(s.shape_values[0]) == "(n + T.int64(1)) // T.int64(2)"
    with pytest.raises(ValueError, match="'step' must not be 0"):
        infer(create.arange(0, 4, 0))
    with pytest.raises(ValueError, match="a symbolic range needs a constant positive integer "
                                         "step"):
        infer(create.arange(0, n, -1))
    with pytest.raises(TypeError, match="relax.arange: 'end' must be a number"):
        create.arange(0, "5")
