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
