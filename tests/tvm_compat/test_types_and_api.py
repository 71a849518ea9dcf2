"""Relax Type classes distinct from StructInfo, ``Function.with_attrs``, ``ir.Op.get`` /
``register_op_attr``, ``rvm.compile`` and ``I.ir_module(check_well_formed=...)``, in the style
of TVM's tests (tests/python/relax/test_expr.py, test_struct_info.py, ir/test_ir_attrs.py)."""
import numpy as np
import pytest

import rvm
from rvm import ir, relax, te, tir
from rvm.ir import assert_structural_equal, structural_equal, structural_hash
from rvm.script import ir as I, relax as R, tir as T
from tests.tvm_compat.helpers import run_both


def test_relax_types_are_not_struct_info():
    t = relax.TensorType(2, "float32")
    assert isinstance(t, ir.Type) and not isinstance(t, relax.StructInfo)
    assert t.ndim == 2 and t.dtype == "float32" and not t.is_unknown_ndim
    assert relax.TensorType(dtype="void").is_unknown_dtype
    assert relax.ShapeType(3).ndim == 3 and relax.ShapeType().ndim == -1
    assert isinstance(relax.ObjectType(), ir.Type) and isinstance(relax.PackedFuncType(), ir.Type)
    tup = relax.TupleType([t, relax.ShapeType(1)])
    assert len(tup.fields) == 2 and relax.TupleType is ir.TupleType
    fn = relax.FuncType([t], relax.ObjectType())
    assert fn.arg_types[0] is t and isinstance(fn.ret_type, relax.ObjectType)
    assert relax.TupleType.empty().fields == ()


def test_types_compare_structurally():
    a = relax.FuncType([relax.TensorType(2, "float32")], relax.ShapeType(2))
    b = relax.FuncType([relax.TensorType(2, "float32")], relax.ShapeType(2))
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    assert not structural_equal(relax.TensorType(2, "float32"), relax.TensorType(2, "float16"))
    assert not structural_equal(relax.ShapeType(2), relax.TensorType(2))


def test_static_type_of_struct_info():
    n = tir.Var("n", "int64")
    get = relax.analysis.get_static_type
    assert_structural_equal(get(R.Tensor((n, 4), "float32")), relax.TensorType(2, "float32"))
    assert_structural_equal(get(R.Shape([n, 2, 3])), relax.ShapeType(3))
    assert_structural_equal(get(R.Prim("int64")), relax.PrimType("int64"))
    assert_structural_equal(get(R.Tuple(R.Object(), R.Tensor(ndim=1))),
                            relax.TupleType([relax.ObjectType(), relax.TensorType(1, None)]))
    assert_structural_equal(get(R.Callable([R.Tensor((2,), "int32")], R.Object())),
                            relax.FuncType([relax.TensorType(1, "int32")], relax.ObjectType()))
    assert_structural_equal(get(R.Callable()), relax.PackedFuncType())
    with pytest.raises(TypeError, match="get_static_type expects a StructInfo, got int"):
        get(3)


def test_type_constructors_refuse_bad_input():
    with pytest.raises(ValueError, match="TensorType: ndim must be an int >= -1"):
        relax.TensorType(-2)
    with pytest.raises(ValueError, match="ShapeType: ndim must be an int"):
        relax.ShapeType("2")
    with pytest.raises(TypeError, match="FuncType: entry 0 must be a Type, got TensorStructInfo"):
        relax.FuncType([R.Tensor((2,), "float32")], relax.ObjectType())
    with pytest.raises(TypeError, match="FuncType: ret_type must be a Type"):
        relax.FuncType([], R.Object())
    with pytest.raises(TypeError, match="TupleType: expected a list of Types"):
        relax.TupleType(relax.ObjectType())


def test_function_with_attrs():
    x = relax.Var("x", R.Tensor((2,), "float32"))
    func = relax.Function([x], relax.SeqExpr([], x))
    out = func.with_attrs({"global_symbol": "f", "Primitive": True})
    assert out.attrs == {"global_symbol": "f", "Primitive": True} and func.attrs is None
    assert out.with_attrs({"Primitive": False}).attrs["Primitive"] is False
    A = te.placeholder((2,), name="A")
    prim = te.create_prim_func([A, te.compute((2,), lambda i: A[i] + 1.0, name="B")])
    assert prim.with_attrs({"tir.noalias": True}).attrs["tir.noalias"] is True
    with pytest.raises(TypeError, match="with_attrs expects a dict of attributes, got list"):
        func.with_attrs([("a", 1)])
    with pytest.raises(TypeError, match="attribute names must be str, got 3"):
        func.with_attrs({3: "x"})


def test_ir_op_get_and_register_op_attr():
    op = ir.Op.get("relax.add")
    assert op is relax.op.Op.get("relax.add") and op.name == "relax.add"
    assert R.add(relax.Var("a", R.Tensor((2,), "float32")),
                 relax.Var("b", R.Tensor((2,), "float32"))).op is op
    with pytest.raises(ValueError, match="operator 'relax.addd' is not registered; did you mean"):
        ir.Op.get("relax.addd")

    key = "test.tvm_compat.FDemo"
    try:
        ir.register_op_attr("relax.multiply", key, "level10")
        assert ir.Op.get("relax.multiply").get_attr(key) == "level10"
        ir.register_op_attr("relax.multiply", key, "low", level=5)  # lower: ignored
        assert ir.Op.get("relax.multiply").get_attr(key) == "level10"

        @ir.register_op_attr("relax.multiply", key, level=11)  # higher: replaces
        def rule(call):
            return call

        assert ir.Op.get("relax.multiply").get_attr(key) is rule
        with pytest.raises(ValueError, match="already registered at plevel 11"):
            ir.register_op_attr("relax.multiply", key, "same", level=11)
        assert ir.Op.get("relax.multiply").has_attr(key)
    finally:
        ir.Op.get("relax.multiply").reset_attr(key)
    assert not ir.Op.get("relax.multiply").has_attr(key)
    with pytest.raises(ValueError, match="operator 'relax.nope' is not registered"):
        ir.register_op_attr("relax.nope", key, 1)


def test_compile_relax_module_and_prim_func():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, x)
            return y

    ex = rvm.compile(Module, target="llvm")
    vm = relax.VirtualMachine(ex, rvm.cpu())
    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm["main"](rvm.nd.array(data)).numpy(), 2 * data)

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 3.0, name="B")
    lib = rvm.compile(te.create_prim_func([A, B]).with_attr("global_symbol", "triple"),
                      target="c")
    out = rvm.nd.empty((4,), "float32")
    lib["triple"](rvm.nd.array(data), out)
    np.testing.assert_allclose(out.numpy(), 3 * data)
    with pytest.raises(TypeError, match="compile expects an IRModule, a relax Function or a "
                                        "PrimFunc, got str"):
        rvm.compile("main")


def test_ir_module_check_well_formed():
    with pytest.raises(ValueError, match=r"(?s)not well formed.*impure call of 'f'"):
        @I.ir_module
        class Impure:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                y = R.call_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
                return y

    @I.ir_module(check_well_formed=False)
    class Allowed:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.call_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
            return y

    assert isinstance(Allowed, ir.IRModule) and "main" in Allowed
    with pytest.raises(TypeError, match="check_well_formed must be a bool, got str"):
        I.ir_module(check_well_formed="no")


def test_callable_signature_variables_are_its_own():
    # A function-valued variable whose signature has symbolic dims is well formed (TVM).
    @I.ir_module
    class Module:
        @R.function
        def double(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            y = R.add(x, x)
            return y

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            f = cls.double
            y = f(x)
            return y

    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(run_both(Module, data), 2 * data)
