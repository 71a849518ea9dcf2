import pytest

from rvm.relax.expr import Var
from rvm.relax.op import statistical
from rvm.relax.struct_info import TensorStructInfo


def t(shape=None, ndim=-1):
    return Var("x", TensorStructInfo(shape, "float32", ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_reductions(infer):
    assert dims(infer(statistical.sum(t((2, 3, 4)), axis=1))) == [2, 4]
    assert dims(infer(statistical.mean(t((2, 3, 4)), axis=[0, -1], keepdims=True))) == [1, 3, 1]
    assert dims(infer(statistical.max(t((2, 3))))) == []
    assert infer(statistical.min(t(ndim=3), axis=0)).ndim == 2
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        infer(statistical.sum(t((2, 3)), axis=3))
    with pytest.raises(ValueError, match="repeated axes"):
        infer(statistical.sum(t((2, 3)), axis=[1, -1]))


def test_more_reductions(infer):
    from rvm import tir

    n = tir.Var("n", "int64")
    s = infer(statistical.prod(t((n, 3, 4)), axis=[1, 2]))
    assert s.shape_values == (n,)
    assert dims(infer(statistical.variance(t((2, 3)), axis=0, keepdims=True))) == [1, 3]
    assert dims(infer(statistical.std(t((2, 3))))) == []
    with pytest.raises(ValueError, match="relax.variance expects a float tensor, got int32"):
        infer(statistical.variance(Var("i", TensorStructInfo((2,), "int32"))))
    with pytest.raises(TypeError, match="relax.sum: 'axis' must be an int or a list of ints"):
        statistical.sum(t((2, 3)), axis="1")
    with pytest.raises(TypeError, match="relax.mean: 'keepdims' must be a bool"):
        statistical.mean(t((2, 3)), keepdims="yes")


def test_scans(infer):
    from rvm import tir

    n = tir.Var("n", "int64")
    s = infer(statistical.cumsum(t((n, 3)), axis=1))
    assert s.shape_values[0] is n and s.dtype == "float32"
    s = infer(statistical.cumsum(t((n, 3)), dtype="float64"))
    assert repr(s.shape_values[0]) == "n * T.int64(3)" and s.dtype == "float64"
    assert infer(statistical.cumprod(t(ndim=2), axis=0)).ndim == 2
    with pytest.raises(ValueError, match="relax.cumsum: axis 2 is out of range"):
        infer(statistical.cumsum(t((2, 3)), axis=2))
    assert statistical.cumsum(t((2,)), exclusive=True).attrs["exclusive"] is True
