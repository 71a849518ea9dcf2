"""BlockBuilder programs in the style of TVM's own tests (tests/python/relax/
test_blockbuilder_core.py, test_vm_build.py): modules built from Python, with struct info
written as TVM users write it (``R.Tensor((n, 4), "float32")`` from Python), compared with
their script form and run on both VM engines."""
import numpy as np
import pytest

import rvm
from rvm import relax, te, tir, topi
from rvm.ir import assert_structural_equal
from rvm.script import ir as I, relax as R, tir as T
from tests.tvm_compat.helpers import round_trip, run, run_both

rng = np.random.default_rng(5)


def test_struct_info_from_python():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 4), "float32"))
    assert isinstance(x.struct_info, relax.TensorStructInfo)
    assert_structural_equal(x.struct_info, relax.TensorStructInfo((n, 4), "float32"))
    assert_structural_equal(R.Tensor("float32", ndim=2), relax.TensorStructInfo(None, "float32",
                                                                                 2))
    assert_structural_equal(R.Shape([2, 3]), relax.ShapeStructInfo([2, 3]))
    assert_structural_equal(R.Prim("int64"), relax.PrimStructInfo("int64"))
    assert_structural_equal(R.Tuple(R.Tensor((2,), "int32"), R.Object()),
                            relax.TupleStructInfo([relax.TensorStructInfo((2,), "int32"),
                                                   relax.ObjectStructInfo()]))
    assert_structural_equal(R.Callable([R.Tensor((2,), "int32")], R.Prim("bool")),
                            relax.FuncStructInfo([relax.TensorStructInfo((2,), "int32")],
                                                 relax.PrimStructInfo("bool")))
    same = R.Tensor(("m", "m * 2"), "float32")
    assert same.shape_values[1].a is same.shape_values[0]  # one name, one variable
    with pytest.raises(ValueError, match="bad dimension"):
        R.Tensor(("m +",), "float32")


def test_emit_te_with_python_struct_info():
    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    y = relax.Var("y", R.Tensor((2, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit_te(topi.add, x, y)
            gv = bb.emit_output(bb.emit_te(topi.exp, lv))
        bb.emit_func_output(gv)
    mod = bb.get()

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                lv = R.emit_te(topi.add, x, y)
                lv1 = R.emit_te(topi.exp, lv)
                gv = lv1
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)
    a, b = rng.random((2, 3), "float32"), rng.random((2, 3), "float32")
    np.testing.assert_allclose(run_both(round_trip(mod), a, b), np.exp(a + b), rtol=1e-5)


def test_high_level_operators_then_legalize():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor((n, 8), "float32"))
    w = relax.Var("w", R.Tensor((8, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, w))
            lv1 = bb.emit(relax.op.nn.relu(lv0))
            gv = bb.emit_output(relax.op.sum(lv1, axis=[1]))
        bb.emit_func_output(gv)
    mod = relax.transform.LegalizeOps()(bb.get())
    a, b = rng.standard_normal((3, 8)).astype("float32"), rng.standard_normal((8, 4)).astype(
        "float32")
    np.testing.assert_allclose(run_both(round_trip(mod), a, b),
                               np.maximum(a @ b, 0).sum(axis=1), rtol=1e-4, atol=1e-5)


def test_call_tir_inplace_from_python():
    @T.prim_func(private=True)
    def relu_inplace(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("relu"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.max(A[vi], T.float32(0))

    x = relax.Var("x", R.Tensor((4,), "float32"))
    bb = relax.BlockBuilder()
    gv_kernel = bb.add_func(relu_inplace, "relu_inplace")
    with bb.function("main", [x]):
        y = bb.emit(relax.op.exp(x))
        z = bb.emit(relax.op.call_tir_inplace(gv_kernel, (y,), [0], R.Tensor((4,), "float32")))
        bb.emit_func_output(z)
    mod = relax.transform.LegalizeOps()(bb.get())
    a = rng.standard_normal(4).astype("float32")
    np.testing.assert_allclose(run_both(round_trip(mod), a), np.exp(a), rtol=1e-6)


def test_closures_from_python():
    bb = relax.BlockBuilder()
    a = relax.Var("a", R.Tensor((3,), "float32"))
    b = relax.Var("b", R.Tensor((3,), "float32"))
    with bb.function("scale_add", [a, b]):
        out = bb.emit(relax.op.add(relax.op.multiply(a, relax.const(2.0, "float32")), b))
        bb.emit_func_output(out)
    gv = bb.get().get_global_var("scale_add")
    x = relax.Var("x", R.Tensor((3,), "float32"))
    with bb.function("main", [x], pure=False):
        clo = bb.emit(relax.op.make_closure(gv, (x,)))
        res = bb.emit(relax.op.invoke_closure(clo, (x,), R.Tensor((3,), "float32")))
        bb.emit_func_output(res)
    mod = bb.get()
    v = rng.random(3, "float32")
    np.testing.assert_allclose(run_both(round_trip(mod), v), 3 * v, rtol=1e-6)


def test_print_and_assert_from_python(capsys):
    x = relax.Var("x", R.Tensor((), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x], pure=False):
        ok = bb.emit(relax.op.less(x, relax.const(10.0, "float32")))
        bb.emit(relax.op.assert_op(ok, [x], format="{} is not below 10"))
        bb.emit(relax.op.print(x, format="x: {}"))
        bb.emit_func_output(x)
    mod = round_trip(bb.get())
    run(mod, np.array(2.5, "float32"))
    assert capsys.readouterr().out.strip() == "x: 2.5"
    with pytest.raises(AssertionError, match="12.0 is not below 10"):
        run(mod, np.array(12.0, "float32"))


def test_match_cast_with_python_struct_info():
    x = relax.Var("x", R.Tensor("float32", ndim=1))
    m = tir.Var("m", "int64")
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.match_cast(x, R.Tensor((m,), "float32"))
            z = bb.emit_te(lambda t: te.compute((m,), lambda i: t[i] * t[i], name="sq"), y)
            gv = bb.emit_output(z)
        bb.emit_func_output(gv)
    mod = bb.get()
    v = rng.random(6, "float32")
    np.testing.assert_allclose(run_both(round_trip(mod), v), v * v, rtol=1e-6)


def test_builtin_alloc_from_python():
    @rvm.register_func("test.tvm_compat.iota", override=True)
    def iota(out):
        np.from_dlpack(out)[:] = np.arange(out.shape[0])

    bb = relax.BlockBuilder()
    with bb.function("main", [], pure=False):
        out = bb.emit(relax.op.builtin.alloc_tensor(relax.ShapeExpr([5]), "int32", 0))
        bb.emit(relax.op.call_packed("test.tvm_compat.iota", out, sinfo_args=R.Tuple()))
        bb.emit_func_output(out)
    np.testing.assert_array_equal(run(round_trip(bb.get())).numpy(), np.arange(5))


def test_save_json_and_load_json():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            y = R.add(x, R.const(np_constant, "float32"))
            return y

    text = rvm.ir.save_json(Module)
    loaded = rvm.ir.load_json(text)
    assert_structural_equal(loaded, Module)
    func = rvm.ir.load_json(rvm.ir.save_json(Module["main"]))
    assert_structural_equal(func, Module["main"])
    with pytest.raises(TypeError, match="expected an IRModule, PrimFunc or relax Function"):
        rvm.ir.save_json(Module["main"].params[0])
    with pytest.raises(ValueError, match="expected a document saved by rvm.ir.save_json"):
        rvm.ir.load_json('{"root": 1, "nodes": []}')
    with pytest.raises(ValueError, match="version mismatch: file 9, reader 1"):
        rvm.ir.load_json(text.replace('"version": 1', '"version": 9'))


np_constant = 1.25
