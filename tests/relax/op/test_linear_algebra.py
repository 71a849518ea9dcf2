import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op.linear_algebra import matmul
from rvm.relax.struct_info import TensorStructInfo


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_matrix_and_batch(infer):
    assert dims(infer(matmul(t((2, 3)), t((3, 4))))) == [2, 4]
    assert dims(infer(matmul(t((5, 1, 2, 3)), t((7, 3, 4))))) == [5, 7, 2, 4]


def test_vector_operands(infer):
    assert dims(infer(matmul(t((3,)), t((3, 4))))) == [4]
    assert dims(infer(matmul(t((2, 3)), t((3,))))) == [2]
    assert infer(matmul(t((3,)), t((3,)))).ndim == 0


def test_symbolic_and_unknown(infer):
    n = tir.Var("n", "int64")
    s = infer(matmul(t((n, 784)), t((784, 128))))
    assert s.shape_values[0] is n and s.shape_values[1].value == 128
    assert infer(matmul(t(ndim=3), t((3, 4)))).ndim == 3
    assert infer(matmul(t(ndim=1), t(ndim=2))).ndim == 1
    assert infer(matmul(t(), t((3, 4)))).ndim == -1


def test_errors_and_out_dtype(infer):
    with pytest.raises(ValueError, match="reduction dimensions differ, 3 vs 5"):
        infer(matmul(t((2, 3)), t((5, 4))))
    with pytest.raises(ValueError, match="scalar"):
        infer(matmul(t(()), t((3, 4))))
    assert infer(matmul(t((2, 3), "int8"), t((3, 4), "int8"), out_dtype="int32")).dtype == "int32"
