import pytest

from rvm import tir
from rvm.ir.base import structural_equal
from rvm.relax.expr import ShapeExpr, Var
from rvm.relax.struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def test_tensor_static_shape():
    s = TensorStructInfo((128, 64), "float32")
    assert s.ndim == 2 and s.dtype == "float32"
    assert [d.value for d in s.shape_values] == [128, 64]
    assert all(d.dtype == "int64" for d in s.shape_values)
    assert isinstance(s.shape, ShapeExpr)


def test_tensor_symbolic_shape():
    n = tir.Var("n", "int64")
    s = TensorStructInfo((n, n * 2), "float16")
    assert s.shape_values[0] is n
    assert s.ndim == 2


def test_tensor_unknowns():
    s = TensorStructInfo(ndim=3)
    assert s.shape is None and s.dtype is None and s.ndim == 3
    assert s.is_unknown_dtype and not s.is_unknown_ndim
    any_tensor = TensorStructInfo()
    assert any_tensor.is_unknown_ndim and any_tensor.shape_values is None


def test_tensor_shape_from_shape_var():
    shape_var = Var("s", ShapeStructInfo(ndim=2))
    s = TensorStructInfo(shape_var, "float32")
    assert s.ndim == 2 and s.shape is shape_var and s.shape_values is None


def test_tensor_errors():
    with pytest.raises(ValueError, match="ndim 3 does not match the shape's rank 2"):
        TensorStructInfo((1, 2), "float32", ndim=3)
    with pytest.raises(ValueError, match="unknown dtype"):
        TensorStructInfo((1,), "floaty")
    with pytest.raises(TypeError, match="int64"):
        TensorStructInfo((tir.Var("m", "int32"),), "float32")
    with pytest.raises(TypeError, match="dimension 0"):
        TensorStructInfo(("n",), "float32")
    with pytest.raises(ValueError, match=">= 0"):
        TensorStructInfo(ndim=-2)


def test_int32_constant_dims_become_int64():
    s = TensorStructInfo((tir.IntImm("int32", 4),), "float32")
    assert s.shape_values[0].dtype == "int64"


def test_prim_and_shape():
    assert PrimStructInfo("int64").value is None
    n = tir.Var("n", "int64")
    p = PrimStructInfo(value=n)
    assert p.dtype == "int64" and p.value is n
    with pytest.raises(ValueError, match="differs"):
        PrimStructInfo("float32", value=n)
    s = ShapeStructInfo([n, 4])
    assert s.ndim == 2 and s.values[1].value == 4
    assert ShapeStructInfo(ndim=3).values is None
    with pytest.raises(ValueError, match="does not match"):
        ShapeStructInfo([1, 2], ndim=1)


def test_tuple_and_func():
    t = TupleStructInfo([TensorStructInfo((2,), "float32"), ObjectStructInfo()])
    assert len(t.fields) == 2
    with pytest.raises(TypeError, match="field 1"):
        TupleStructInfo([ObjectStructInfo(), 3])
    f = FuncStructInfo([TensorStructInfo(ndim=1)], TensorStructInfo(ndim=1), purity=False)
    assert not f.is_opaque and not f.purity
    opaque = FuncStructInfo.opaque_func()
    assert opaque.is_opaque and isinstance(opaque.ret, ObjectStructInfo)


def test_structural_equality_up_to_symbolic_renaming():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    assert structural_equal(TensorStructInfo((n, 4), "float32"),
                            TensorStructInfo((m, 4), "float32"), map_free_vars=True)
    assert not structural_equal(TensorStructInfo((n, 4), "float32"),
                                TensorStructInfo((n, 5), "float32"))
    assert not structural_equal(TensorStructInfo((4,), "float32"), TensorStructInfo((4,), "int32"))
