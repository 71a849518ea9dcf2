import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op.index import gather_elements, strided_slice, take
from rvm.relax.struct_info import TensorStructInfo

n = tir.Var("n", "int64")
BIG = 2 ** 63 - 1


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_take(infer):
    s = infer(take(t((10, 4)), t((n, 3), "int64"), axis=0))
    assert s.shape_values[0] is n and dims(s)[1:] == [3, 4]
    assert dims(infer(take(t((2, 5, 3)), t((4,), "int32"), axis=-2))) == [2, 4, 3]
    assert dims(infer(take(t((6,)), t((), "int64")))) == []
    assert infer(take(t((6, 2)), t(ndim=2, dtype="int64"), axis=1)).ndim == 3
    with pytest.raises(ValueError, match="argument 'indices' must be an integer tensor, got "
                                         "float32"):
        infer(take(t((6,)), t((2,))))
    with pytest.raises(ValueError, match="without 'axis', argument 'x' must be 1-D, got rank 2"):
        infer(take(t((6, 2)), t((2,), "int64")))
    with pytest.raises(ValueError, match="'mode' expects one of 'fast', 'clip', 'wrap', got "
                                         "'nan'"):
        take(t((6,)), t((2,), "int64"), mode="nan")


def test_strided_slice(infer):
    s = infer(strided_slice(t((8, 9, 10, 10)), axes=[0, 1, 3], begin=[1, 0, 8], end=[8, 9, 0],
                            strides=[2, 1, -3]))
    assert dims(s) == [4, 9, 10, 3]
    assert dims(infer(strided_slice(t((3, 6)), [0, 1], [-9, 4], [2, 99]))) == [2, 2]
    assert dims(infer(strided_slice(t((5,)), [0], [BIG], [-BIG], [-1]))) == [5]
    assert dims(infer(strided_slice(t((5,)), [0], [3], [1]))) == [0]
    s = infer(strided_slice(t((n, 4)), axes=[0], begin=[0], end=[BIG]))
    assert s.shape_values[0] is n
    s = infer(strided_slice(t((n, 4)), axes=[0], begin=[1], end=[BIG], assume_inbound=True))
    assert repr(s.shape_values[0]).startswith("T.int64(")  # the bound is taken as given
    m = tir.Var("m", "int64")
    s = infer(strided_slice(t((n, 4)), [0], [0], [m]))
    assert "m" in repr(s.shape_values[0])
    with pytest.raises(ValueError, match="'axes', 'begin', 'end' and 'strides' must have the "
                                         "same length, got 2, 1, 1 and 2"):
        infer(strided_slice(t((3, 4)), [0, 1], [0], [1]))
    with pytest.raises(ValueError, match=r"'strides' must not contain 0, got \[0\]"):
        infer(strided_slice(t((3, 4)), [0], [0], [1], [0]))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        infer(strided_slice(t((3, 4)), [2], [0], [1]))
    with pytest.raises(TypeError, match="'begin' must be a list of ints or PrimExprs"):
        strided_slice(t((3, 4)), [0], 0, [1])


def test_gather_elements(infer):
    s = infer(gather_elements(t((10, 4)), t((n, 4), "int64"), axis=0))
    assert s.shape_values[0] is n and dims(s)[1:] == [4] and s.dtype == "float32"
    assert dims(infer(gather_elements(t((2, 5)), t((2, 3), "int32"), axis=-1))) == [2, 3]
    assert infer(gather_elements(t((6, 2)), t(ndim=2, dtype="int64"), axis=1)).ndim == 2
    with pytest.raises(ValueError, match="argument 'indices' must be an integer tensor, got "
                                         "float32"):
        infer(gather_elements(t((6,)), t((2,))))
    with pytest.raises(ValueError, match=r"argument 'indices' must have the rank of 'x' \(2\), "
                                         "got rank 1"):
        infer(gather_elements(t((6, 2)), t((2,), "int64")))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        infer(gather_elements(t((6, 2)), t((2, 2), "int64"), axis=2))
