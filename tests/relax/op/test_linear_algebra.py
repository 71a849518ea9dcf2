import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.ir.base import assert_structural_equal
from rvm.relax.op.linear_algebra import linear, matmul
from rvm.script import from_source
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


def test_linear_is_matmul_of_the_transposed_weight(infer):
    n = tir.Var("n", "int64")
    call = linear(t((n, 3)), t((4, 3)), t((4,)))
    assert call.op.name == "relax.add" and call.args[0].op.name == "relax.matmul"
    s = infer(call)
    assert s.shape_values[0] is n and s.shape_values[1].value == 4
    assert infer(linear(t((2, 3)), t((4, 3)), out_dtype="float32")).dtype == "float32"
    with pytest.raises(ValueError, match="reduction dimensions differ, 3 vs 5"):
        infer(linear(t((2, 3)), t((4, 5))))


def test_linear_parses_as_a_composite_of_r_names():
    text = '''
@R.function
def main(x: R.Tensor(("n", 3), "float32"), w: R.Tensor((4, 3), "float32")):
    y = R.linear(x, w)
    return y
'''
    func = from_source(text)
    ops = [b.value.op.name for b in func.body.blocks[0].bindings]
    assert ops == ["relax.permute_dims", "relax.matmul"]
    assert_structural_equal(from_source(func.script()), func)
