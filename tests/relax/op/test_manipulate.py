import pytest

from rvm import tir
from rvm.relax.expr import Tuple, Var
from rvm.relax.op.manipulate import concat, flatten, permute_dims, reshape
from rvm.relax.struct_info import TensorStructInfo


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_permute_dims(infer):
    assert dims(infer(permute_dims(t((2, 3, 4))))) == [4, 3, 2]
    assert dims(infer(permute_dims(t((2, 3, 4)), [0, 2, 1]))) == [2, 4, 3]
    assert dims(infer(permute_dims(t((2, 3)), [-1, 0]))) == [3, 2]
    with pytest.raises(ValueError, match="not a permutation"):
        infer(permute_dims(t((2, 3)), [0, 0]))
    with pytest.raises(ValueError, match="expected 2 axes"):
        infer(permute_dims(t((2, 3)), [0, 1, 2]))
    assert infer(permute_dims(t(ndim=3))).ndim == 3


def test_reshape(infer):
    assert dims(infer(reshape(t((2, 3, 4)), (6, 4)))) == [6, 4]
    assert dims(infer(reshape(t((2, 3, 4)), (-1, 12)))) == [2, 12]
    with pytest.raises(ValueError, match="cannot reshape"):
        infer(reshape(t((2, 3)), (4, 2)))
    with pytest.raises(ValueError, match="at most one dimension may be -1"):
        infer(reshape(t((2, 3)), (-1, -1)))
    n = tir.Var("n", "int64")
    s = infer(reshape(t((n, 4)), (n, 2, 2)))
    assert s.shape_values[0] is n
    assert infer(reshape(t((n, 4)), (-1,))).ndim == 1


def test_flatten_and_concat(infer):
    assert dims(infer(flatten(t((2, 3, 4))))) == [24]
    assert infer(flatten(t(ndim=3))).ndim == 1
    assert dims(infer(concat([t((2, 3)), t((5, 3))]))) == [7, 3]
    assert dims(infer(concat(Tuple([t((2, 3)), t((2, 1))]), axis=1))) == [2, 4]
    with pytest.raises(ValueError, match="dimension 1 differs, 3 vs 4"):
        infer(concat([t((2, 3)), t((2, 4))]))
    with pytest.raises(ValueError, match="different ranks"):
        infer(concat([t((2, 3)), t((2,))]))
