import numpy as np
import pytest

import rvm
from rvm import tir
from rvm.ir.base import structural_equal
from rvm.relax.expr import (
    Call,
    Constant,
    DataflowVar,
    DataTypeImm,
    ExternFunc,
    PrimValue,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    const,
    get_struct_info,
)
from rvm.relax.struct_info import (
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def test_var_and_dataflow_var():
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    assert x.name_hint == "x" and x.struct_info.ndim == 2
    lv = DataflowVar("lv", TensorStructInfo((2,), "float32"))
    assert isinstance(lv, Var) and type(lv) is DataflowVar
    with pytest.raises(TypeError, match="struct_info must be a StructInfo"):
        Var("y", (2, 3))
    assert Var("z").struct_info is None


def test_vars_compare_up_to_renaming_but_struct_info_counts():
    a = Var("a", TensorStructInfo((2,), "float32"))
    b = Var("b", TensorStructInfo((2,), "float32"))
    c = Var("c", TensorStructInfo((3,), "float32"))
    assert structural_equal(Tuple([a, a]), Tuple([b, b]), map_free_vars=True)
    assert not structural_equal(Tuple([a, a]), Tuple([b, b]))  # free: TVM's default
    assert not structural_equal(Tuple([a, a]), Tuple([a, b]))
    assert not structural_equal(a, c)


def test_const_from_numpy_and_scalars():
    data = np.arange(6, dtype="float32").reshape(2, 3)
    c = const(data)
    assert isinstance(c.data, rvm.runtime.NDArray)
    np.testing.assert_array_equal(c.data.numpy(), data)
    assert c.struct_info.dtype == "float32"
    assert [d.value for d in c.struct_info.shape_values] == [2, 3]
    assert const(1.5).struct_info.dtype == "float32"
    assert const(3).struct_info.dtype == "int32"
    assert const([1, 2], "int64").struct_info.dtype == "int64"
    # the seed passes a TensorStructInfo as the second argument
    converted = const(np.ones((2,), "float64"), TensorStructInfo((2,), "float32"))
    assert converted.data.dtype == "float32"
    nd = rvm.nd.array(data)
    assert const(nd).data is nd
    with pytest.raises(TypeError, match="NDArray"):
        Constant(data)


def test_constants_compare_by_content():
    assert structural_equal(const(np.ones(3, "float32")), const(np.ones(3, "float32")))
    assert not structural_equal(const(np.ones(3, "float32")), const(np.zeros(3, "float32")))


def test_leaf_struct_info():
    n = tir.Var("n", "int64")
    shape = ShapeExpr([n, 4])
    assert isinstance(shape.struct_info, ShapeStructInfo) and shape.struct_info.ndim == 2
    assert len(shape) == 2 and shape[0] is n
    pv = PrimValue(7)
    assert pv.value.dtype == "int64" and pv.struct_info.value.value == 7
    assert isinstance(PrimValue(n).struct_info, PrimStructInfo)
    assert isinstance(StringImm("hi").struct_info, ObjectStructInfo)
    assert DataTypeImm("float16").value == "float16"
    ext = ExternFunc("env.relu")
    assert ext.struct_info.is_opaque and not ext.struct_info.purity


def test_tuple_and_get_item():
    x = Var("x", TensorStructInfo((2,), "float32"))
    t = Tuple([x, PrimValue(1)])
    assert isinstance(t.struct_info, TupleStructInfo) and len(t) == 2 and t[0] is x
    item = TupleGetItem(t, 1)
    assert isinstance(item.struct_info, PrimStructInfo)
    with pytest.raises(IndexError, match="out of range"):
        TupleGetItem(t, 2)
    tv = Var("tv", t.struct_info)
    assert isinstance(tv[0], TupleGetItem)
    with pytest.raises(TypeError, match="not a tuple"):
        x[0]
    assert Tuple([Var("u")]).struct_info_ is None


def test_call_fields_and_checks():
    x = Var("x", TensorStructInfo((2,), "float32"))
    call = Call(ExternFunc("f"), [x], attrs={"axis": 1},
                sinfo_args=[TensorStructInfo((2,), "float32")])
    assert call.args == (x,) and call.attrs == {"axis": 1} and len(call.sinfo_args) == 1
    assert call.struct_info_ is None
    with pytest.raises(TypeError, match="argument 0"):
        Call(ExternFunc("f"), [3])
    with pytest.raises(TypeError, match="sinfo_args"):
        Call(ExternFunc("f"), [x], sinfo_args=[3])
    with pytest.raises(ValueError, match="no struct_info"):
        get_struct_info(call)
