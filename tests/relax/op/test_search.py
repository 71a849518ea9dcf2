import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op.search import argmax, argmin, where
from rvm.relax.struct_info import TensorStructInfo


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_where_broadcasts_all_three(infer):
    n = tir.Var("n", "int64")
    s = infer(where(t((n, 1), "bool"), t((3,)), t((1, 1))))
    assert s.dtype == "float32" and s.shape_values[0] is n and s.shape_values[1].value == 3
    assert infer(where(t(ndim=2, dtype="bool"), t((3,)), t((3,)))).ndim == 2
    with pytest.raises(ValueError, match="relax.where: argument 'condition' must be a bool "
                                         "tensor, got float32"):
        infer(where(t((2,)), t((2,)), t((2,))))
    with pytest.raises(TypeError, match="float32 vs int32"):
        infer(where(t((2,), "bool"), t((2,)), t((2,), "int32")))
    with pytest.raises(ValueError, match="dimension 0 is 2 vs 3"):
        infer(where(t((2,), "bool"), t((3,)), t((3,))))


def test_argmax_argmin(infer):
    n = tir.Var("n", "int64")
    s = infer(argmax(t((n, 4, 5)), axis=1))
    assert s.dtype == "int64" and s.shape_values[0] is n and dims(s)[1:] == [5]
    assert dims(infer(argmin(t((2, 3)), axis=-1, keepdims=True))) == [2, 1]
    assert dims(infer(argmax(t((2, 3))))) == []
    assert dims(infer(argmax(t((2, 3)), keepdims=True))) == [1, 1]
    assert infer(argmin(t(ndim=3), axis=0)).ndim == 2
    with pytest.raises(ValueError, match="relax.argmax: axis 2 is out of range for a rank-2"):
        infer(argmax(t((2, 3)), axis=2))
    with pytest.raises(TypeError):
        argmax(t((2, 3)), axis=[0, 1])
