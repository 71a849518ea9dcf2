import pytest

from rvm import tir
from rvm.relax.expr import Constant, Var
from rvm.relax.op import binary
from rvm.relax.struct_info import TensorStructInfo


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return None if sinfo.shape_values is None else [getattr(d, "value", d)
                                                     for d in sinfo.shape_values]


def test_broadcasting(infer):
    s = infer(binary.add(t((2, 1, 3)), t((4, 1))))
    assert dims(s) == [2, 4, 3] and s.dtype == "float32"
    assert dims(infer(binary.multiply(t((3,)), t(())))) == [3]


def test_symbolic_dims(infer):
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    s = infer(binary.subtract(t((n, 4)), t((1, 4))))
    assert s.shape_values[0] is n
    unknown = infer(binary.divide(t((n, 4)), t((m, 4))))
    assert unknown.shape is None and unknown.ndim == 2
    assert infer(binary.add(t(ndim=2), t((3,)))).ndim == 2
    assert infer(binary.add(t(), t((3,)))).ndim == -1


def test_errors(infer):
    with pytest.raises(ValueError, match="dimension 0 is 2 vs 3"):
        infer(binary.add(t((2,)), t((3,))))
    with pytest.raises(TypeError, match="float32 vs int32"):
        infer(binary.add(t((2,)), t((2,), "int32")))
    with pytest.raises(TypeError, match="argument 'x2' must be a tensor"):
        from rvm.relax.expr import ShapeExpr
        infer(binary.add(t((2,)), ShapeExpr([2])))


def test_comparisons_are_bool_and_scalars_become_constants(infer):
    s = infer(binary.less(t((2, 3)), t((2, 3))))
    assert s.dtype == "bool" and dims(s) == [2, 3]
    call = binary.maximum(t((2,)), 0.0)
    assert isinstance(call.args[1], Constant) and call.args[1].data.dtype == "float32"
    assert dims(infer(call)) == [2]
    with pytest.raises(TypeError, match="operands"):
        binary.add(t((2,)), "one")


def test_mod_and_logical_ops(infer):
    n = tir.Var("n", "int64")
    s = infer(binary.floor_mod(t((n, 3)), t((3,))))
    assert s.shape_values[0] is n and s.dtype == "float32"
    assert dims(infer(binary.mod(t((2, 3), "int32"), t((1,), "int32")))) == [2, 3]
    for build in (binary.logical_and, binary.logical_or, binary.logical_xor):
        s = infer(build(t((n, 1), "bool"), t((4,), "bool")))
        assert s.dtype == "bool" and s.shape_values[0] is n and s.shape_values[1].value == 4
    with pytest.raises(ValueError, match="relax.logical_and expects bool tensors, got float32 "
                                         "for 'x2'"):
        infer(binary.logical_and(t((2,), "bool"), t((2,))))
    assert isinstance(binary.logical_or(t((2,), "bool"), True).args[1], Constant)
