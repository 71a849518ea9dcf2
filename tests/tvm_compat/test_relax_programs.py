"""Relax programs in the style of TVM's own tests (tests/python/relax/test_vm_build.py,
test_tvmscript_parser.py): script-form modules, each printed and parsed back, built and run
on both VM engines against numpy. ``tvm`` is replaced by ``rvm`` and nothing else."""
import numpy as np
import pytest

import rvm
from rvm import topi
from rvm.ir import assert_structural_equal
from rvm.script import ir as I, relax as R, tir as T
from tests.tvm_compat.helpers import round_trip, run, run_both

rng = np.random.default_rng(12)


def _rand(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def test_dataflow_add_multiply():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
            with R.dataflow():
                lv0 = R.add(x, y)
                gv = R.multiply(lv0, y)
                R.output(gv)
            return gv

    x, y = _rand(3, 4), _rand(3, 4)
    np.testing.assert_allclose(run_both(round_trip(Module), x, y), (x + y) * y, rtol=1e-6)


def test_emit_te_in_script():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
            gv = R.emit_te(topi.add, x, y)
            gv1 = R.emit_te(topi.nn.relu, gv, primfunc_name_hint="relu")
            return gv1

    assert {gv.name_hint for gv in Module.functions} == {"add", "relu", "main"}
    x, y = _rand(4, 4), _rand(4, 4)
    np.testing.assert_allclose(run_both(round_trip(Module), x, y), np.maximum(x + y, 0),
                               rtol=1e-6)


def test_emit_te_symbolic_shape():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            with R.dataflow():
                lv = R.emit_te(topi.nn.softmax, x)
                gv = R.emit_te(topi.multiply, lv, x)
                R.output(gv)
            return gv

    x = _rand(5, 4)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(run_both(round_trip(Module), x),
                               e / e.sum(axis=1, keepdims=True) * x, rtol=1e-5, atol=1e-6)


def test_call_tir_inplace_overwrites_its_argument():
    @I.ir_module
    class Module:
        @T.prim_func
        def add_inplace(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            T.func_attr({"tir.noalias": True})
            for i, j in T.grid(2, 3):
                with T.block("T_add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = A[vi, vj] + B[vi, vj]

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            cls = Module
            gv = R.call_tir_inplace(cls.add_inplace, (x, y), inplace_indices=[0],
                                    out_sinfo=R.Tensor((2, 3), "float32"))
            return gv

    round_trip(Module)
    x, y = _rand(2, 3), _rand(2, 3)
    x_nd = rvm.nd.array(x)
    out = run(Module, x_nd, y)
    np.testing.assert_allclose(out.numpy(), x + y, rtol=1e-6)
    np.testing.assert_allclose(x_nd.numpy(), x + y, rtol=1e-6)  # written in place


def test_call_tir_inplace_with_a_new_output():
    @I.ir_module
    class Module:
        @T.prim_func
        def scale_and_copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("copy"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = A[vi]
                    A[vi] = A[vi] * T.float32(2)

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            res = R.call_tir_inplace(cls.scale_and_copy, (x,), inplace_indices=[0, -1],
                                     out_sinfo=[R.Tensor((4,), "float32"),
                                                R.Tensor((4,), "float32")])
            doubled = res[0]
            copy = res[1]
            return R.add(doubled, copy)

    x = _rand(4)
    np.testing.assert_allclose(run_both(round_trip(Module), x), 3 * x, rtol=1e-6)


def test_closures():
    @I.ir_module
    class Module:
        @R.function
        def lifted(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            return R.subtract(x, y)

        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            cls = Module
            clo = R.make_closure(cls.lifted, (x,))
            res = R.invoke_closure(clo, (y,), sinfo_args=R.Tensor((4,), "float32"))
            return res

    x, y = _rand(4), _rand(4)
    np.testing.assert_allclose(run_both(round_trip(Module), x, y), x - y, rtol=1e-6)


def test_print(capsys):
    @I.ir_module
    class Module:
        @R.function(pure=False)
        def main(x: R.Tensor((), "int32"), y: R.Tensor((2,), "int32")):
            R.print(x, y, format="x={} y={}")
            R.print(x)
            return x

    round_trip(Module)
    run(Module, np.array(7, "int32"), np.array([1, 2], "int32"))
    assert capsys.readouterr().out.splitlines() == ["x=7 y=[1 2]", "7"]


def test_assert_op():
    @I.ir_module
    class Module:
        @R.function(pure=False)
        def main(x: R.Tensor((), "int32")):
            positive = R.greater(x, R.const(0, "int32"))
            R.assert_op(positive, [x], format="x must be positive, got {}")
            return x

    round_trip(Module)
    assert run(Module, np.array(3, "int32")).numpy() == 3
    with pytest.raises(AssertionError, match="x must be positive, got -2"):
        run(Module, np.array(-2, "int32"))


def test_builtin_alloc_tensor_keywords():
    @I.ir_module
    class Module:
        @T.prim_func
        def fill(A: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("fill"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.Cast("float32", vi * 3 + vj)

        @R.function(pure=False)
        def main():
            cls = Module
            alloc = R.builtin.alloc_tensor(R.shape([2, 3]), dtype="float32",
                                           runtime_device_index=0)
            _ = cls.fill(alloc)
            return alloc

    round_trip(Module)
    np.testing.assert_array_equal(run(Module).numpy(), np.arange(6).reshape(2, 3))


def test_vm_alloc_storage_keywords():
    @I.ir_module
    class Module:
        @T.prim_func
        def copy(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("copy"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj]

        @R.function(pure=False)
        def main(x: R.Tensor((2, 3), "float32")):
            cls = Module
            storage = R.vm.alloc_storage(R.shape([24]), runtime_device_index=0, dtype="uint8")
            y = R.vm.alloc_tensor(storage, offset=0, shape=R.shape([2, 3]), dtype="float32")
            _ = cls.copy(x, y)
            return y

    round_trip(Module)
    x = _rand(2, 3)
    np.testing.assert_array_equal(run(Module, x).numpy(), x)


def test_memory_alloc_and_kill():
    @I.ir_module
    class Module:
        @T.prim_func
        def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("double"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = A[vi] * T.float32(2)

        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            storage = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"),
                                             R.dtype("uint8"))
            tmp = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]),
                                        R.dtype("float32"))
            _ = cls.double(x, tmp)
            out = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0))
            _1 = cls.double(tmp, out)
            _2 = R.memory.kill_tensor(tmp)
            _3 = R.memory.kill_storage(storage)
            return out

    x = _rand(4)
    np.testing.assert_allclose(run(round_trip(Module), x).numpy(), 4 * x, rtol=1e-6)


def test_scalar_prim_operands():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32"), k: R.Prim(value="n")):
            n = T.int64()
            with R.dataflow():
                lv = R.add(x, R.prim_value(T.float32(1.5)))
                gv = R.multiply(lv, R.prim_value(T.float32(2)))
                R.output(gv)
            return gv

    x = _rand(3, 4)
    np.testing.assert_allclose(run_both(round_trip(Module), x, 3), (x + 1.5) * 2, rtol=1e-6)


def test_prim_value_parameter_in_a_kernel():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n",), "int64"), k: R.Prim(value="n")):
            n = T.int64()
            gv = R.multiply(x, k)
            return gv

    x = np.arange(5, dtype="int64")
    np.testing.assert_array_equal(run_both(round_trip(Module), x, 5), x * 5)


def test_two_prim_operands_give_a_prim():
    @R.function
    def main(a: R.Prim("float32"), b: R.Prim("float32")):
        c = R.add(a, b)
        d = R.less(a, b)
        return (c, d)

    assert_structural_equal(main.body.body.struct_info,
                            R.Tuple(R.Prim("float32"), R.Prim("bool")))


def test_if_on_a_scalar_tensor():
    @I.ir_module
    class Module:
        @R.function
        def main(cond: R.Tensor((), "bool"), x: R.Tensor((3,), "float32")):
            if cond:
                w = R.add(x, x)
                y = R.multiply(w, x)
            else:
                w = R.multiply(x, x)
                y = R.add(w, x)
            return y

    x = _rand(3)
    np.testing.assert_allclose(run_both(round_trip(Module), np.array(True), x), 2 * x * x,
                               rtol=1e-6)
    np.testing.assert_allclose(run_both(Module, np.array(False), x), x * x + x, rtol=1e-6)


def test_match_cast_to_symbolic_shape():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(ndim=2, dtype="float32")):
            m = T.int64()
            n = T.int64()
            y = R.match_cast(x, R.Tensor((m, n), "float32"))
            z = R.reshape(y, R.shape([n, m]))
            return z

    x = _rand(2, 6)
    np.testing.assert_array_equal(run_both(round_trip(Module), x), x.reshape(6, 2))


def test_call_pure_packed_with_sinfo_args():
    @rvm.register_func("test.tvm_compat.negate", override=True)
    def negate(x):
        return rvm.nd.array(-x.numpy())

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((3,), "float32")):
            with R.dataflow():
                y = R.call_pure_packed("test.tvm_compat.negate", x,
                                       sinfo_args=R.Tensor((3,), "float32"))
                R.output(y)
            return y

    x = _rand(3)
    np.testing.assert_array_equal(run_both(round_trip(Module), x), -x)


def test_calls_between_relax_functions_and_tuples():
    @I.ir_module
    class Module:
        @R.function
        def split_sum(x: R.Tensor((4,), "float32")):
            parts = R.split(x, indices_or_sections=2, axis=0)
            return R.add(parts[0], parts[1])

        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            cls = Module
            a = cls.split_sum(x)
            b = cls.split_sum(y)
            return (a, b)

    x, y = _rand(4), _rand(4)
    round_trip(Module)
    a, b = run(Module, x, y)
    np.testing.assert_allclose(a.numpy(), x[:2] + x[2:], rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), y[:2] + y[2:], rtol=1e-6)


def test_nn_operators():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 2, 6, 6), "float32"), w: R.Tensor((3, 2, 3, 3), "float32")):
            with R.dataflow():
                lv0 = R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1])
                lv1 = R.nn.relu(lv0)
                lv2 = R.nn.max_pool2d(lv1, pool_size=[2, 2], strides=[2, 2])
                lv3 = R.reshape(lv2, R.shape([1, 27]))
                gv = R.nn.softmax(lv3, axis=-1)
                R.output(gv)
            return gv

    x, w = _rand(1, 2, 6, 6), _rand(3, 2, 3, 3)
    out = run_both(round_trip(Module), x, w)
    pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 3, 6, 6), "float32")
    for i in range(6):
        for j in range(6):
            conv[0, :, i, j] = np.tensordot(w, pad[0, :, i:i + 3, j:j + 3], axes=3)
    pooled = np.maximum(conv, 0).reshape(1, 3, 3, 2, 3, 2).max(axis=(3, 5)).reshape(1, 27)
    e = np.exp(pooled - pooled.max())
    np.testing.assert_allclose(out, e / e.sum(), rtol=1e-4, atol=1e-6)


def test_symbolic_expression_not_bound_by_a_parameter():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n", "n"), "float32")):
            n = T.int64()
            flat = R.reshape(x, R.shape([n * n]))
            return R.add(flat, flat)

    x = _rand(3, 3)
    np.testing.assert_allclose(run_both(round_trip(Module), x), 2 * x.reshape(9), rtol=1e-6)


def test_call_dps_packed_of_an_environment_function():
    @rvm.register_func("test.tvm_compat.relu", override=True)
    def relu(x, out):
        np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, "n"), "float32")):
            n = T.int64()
            with R.dataflow():
                gv = R.call_dps_packed("test.tvm_compat.relu", (x,),
                                       out_sinfo=R.Tensor((2, n), "float32"))
                R.output(gv)
            return gv

    x = _rand(2, 5)
    np.testing.assert_array_equal(run_both(round_trip(Module), x), np.maximum(x, 0))


def test_lowered_allocation_as_tvm_prints_it():
    """The allocation calls as TVM's printer writes them after the lowering passes: positional
    R.dtype / R.prim_value / R.str arguments, the storage scope included."""
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        alloc: R.Tensor((2, 3), dtype="float32") = R.builtin.alloc_tensor(
            R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        storage: R.Object = R.vm.alloc_storage(R.shape([24]), R.prim_value(0),
                                               R.dtype("uint8"), R.str("global"))
        t: R.Tensor((2, 3), dtype="float32") = R.vm.alloc_tensor(
            storage, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"))
        _: R.Tuple = R.vm.kill_object(t)
        return alloc

    keyword = main.body.blocks[0].bindings[0].value
    assert [type(a).__name__ for a in keyword.args] == ["ShapeExpr", "DataTypeImm",
                                                        "PrimValue"]
    out = run(round_trip(rvm.IRModule({"main": main})), _rand(2, 3))
    assert out.shape == (2, 3) and out.dtype == "float32"
