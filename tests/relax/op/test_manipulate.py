import pytest

from rvm import tir
from rvm.relax.expr import Tuple, Var
from rvm.relax.op.join import concat, repeat, split, tile
from rvm.relax.op.manipulate import (
    broadcast_to, expand_dims, flatten, permute_dims, reshape, squeeze,
)
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


def test_reshape_resolves_minus_one_symbolically(infer):
    n = tir.Var("n", "int64")
    x = t((n, 4))
    call = reshape(x, (-1,))
    assert "-1" not in repr(call.args[1].values)  # resolved at construction, as in TVM
    s = infer(call)
    assert repr(s.shape_values[0]) == "n * T.int64(4)"
    s = infer(reshape(t((n, 4, 3)), (-1, 6)))
    assert dims(s)[1] == 6 and repr(s.shape_values[0]) == "n * T.int64(2)"
    assert dims(infer(reshape(t((n, 4)), (n, -1)))) == [n, 4]
    with pytest.raises(ValueError, match=r"relax.reshape: cannot reshape \[2, 3\] \(6 elements\) "
                                         r"into \[4, -1\]"):
        reshape(t((2, 3)), (4, -1))
    with pytest.raises(ValueError, match="new dimensions must be >= 0 or -1"):
        infer(reshape(t((2, 3)), (-2, 3)))


def test_expand_dims(infer):
    n = tir.Var("n", "int64")
    s = infer(expand_dims(t((n, 3)), [0, -1]))
    assert dims(s)[0] == 1 and s.shape_values[1] is n and dims(s)[2:] == [3, 1]
    assert dims(infer(expand_dims(t((2, 3)), 1))) == [2, 1, 3]
    assert infer(expand_dims(t(ndim=2), [0, 1])).ndim == 4
    with pytest.raises(ValueError, match="relax.expand_dims: axis 4 is out of range for a "
                                         "rank-4 tensor"):
        infer(expand_dims(t((2, 3)), [0, 4]))
    with pytest.raises(ValueError, match="repeated axes"):
        infer(expand_dims(t((2, 3)), [1, -3]))
    with pytest.raises(TypeError, match="relax.expand_dims: 'axis' must be an int or a list"):
        expand_dims(t((2, 3)), "0")


def test_squeeze(infer):
    n = tir.Var("n", "int64")
    assert dims(infer(squeeze(t((1, 3, 1))))) == [3]
    s = infer(squeeze(t((n, 1, 3)), axis=1))
    assert s.shape_values[0] is n and dims(s)[1:] == [3]
    assert infer(squeeze(t((n, 1)))).ndim == -1  # whether n is 1 is unknown
    assert infer(squeeze(t((n, 1)), axis=[0])).shape_values[0].value == 1  # n taken as 1
    with pytest.raises(ValueError, match=r"relax.squeeze: axis 1 has size 3, expected 1 \(shape "
                                         r"\[1, 3\]\)"):
        infer(squeeze(t((1, 3)), axis=1))


def test_broadcast_to(infer):
    n = tir.Var("n", "int64")
    s = infer(broadcast_to(t((3, 1)), (n, 3, 4)))
    assert s.shape_values[0] is n and dims(s)[1:] == [3, 4]
    with pytest.raises(ValueError, match=r"cannot broadcast shape \[3, 2\] to \[3, 4\]: "
                                         "dimension 1 is 2, expected 1 or 4"):
        infer(broadcast_to(t((3, 2)), (3, 4)))
    with pytest.raises(ValueError, match="cannot broadcast a rank-2 tensor to rank 1"):
        infer(broadcast_to(t((3, 2)), (6,)))


def test_split(infer):
    n = tir.Var("n", "int64")
    fields = infer(split(t((7, 2)), 3)).fields
    assert [dims(f) for f in fields] == [[3, 2], [3, 2], [1, 2]]
    fields = infer(split(t((2, 5)), [1, 3, 9], axis=-1)).fields
    assert [dims(f)[1] for f in fields] == [1, 2, 2, 0]
    fields = infer(split(t((n, 2)), [2])).fields
    assert dims(fields[0]) == [2, 2] and repr(fields[1].shape_values[0]) == "n - T.int64(2)"
    assert len(infer(split(t(ndim=2), 4)).fields) == 4
    with pytest.raises(ValueError, match="must be positive, got 0"):
        infer(split(t((4,)), 0))
    with pytest.raises(ValueError, match=r"the cut points must ascend, got \[3, 1\]"):
        infer(split(t((4,)), [3, 1]))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        infer(split(t((4, 2)), 2, axis=2))


def test_tile_and_repeat(infer):
    n = tir.Var("n", "int64")
    assert dims(infer(tile(t((2, 3)), [2]))) == [2, 6]
    assert dims(infer(tile(t((2, 3)), [2, 1, 2]))) == [2, 2, 6]
    s = infer(tile(t((n, 3)), [3, 1]))
    assert repr(s.shape_values[0]) == "n * T.int64(3)" and dims(s)[1] == 3
    with pytest.raises(ValueError, match="'repeats' must be non-negative"):
        infer(tile(t((2,)), [-1]))
    assert dims(infer(repeat(t((2, 3)), 2, axis=1))) == [2, 6]
    assert dims(infer(repeat(t((2, 3)), 2))) == [12]
    assert infer(repeat(t((n, 3)), 2, axis=1)).shape_values[0] is n
    with pytest.raises(TypeError, match="relax.repeat: 'repeats' must be an int"):
        repeat(t((2,)), 1.5)
