"""Lowering features end to end: symbolic batches, boundary errors, If, calls between Relax
functions, tuples, match_cast, derived dimensions, and steady-state memory."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.ir.transform import PassContext
from rvm.relax.transform.pipeline import default_build_pipeline

from tests.relax.transform.contract import check_contract


def _vm(mod, target="python"):
    check_contract(default_build_pipeline()(mod))
    return relax.VirtualMachine(relax.build(mod, target=target), rvm.cpu())


@pytest.fixture(autouse=True)
def env_functions():
    def linear(x, w, b, out):
        np.matmul(np.from_dlpack(x), np.from_dlpack(w).T, out=np.from_dlpack(out))
        np.from_dlpack(out)[...] += np.from_dlpack(b)

    def repeat2(x, out):
        np.from_dlpack(out)[...] = np.concatenate([np.from_dlpack(x)] * 2, axis=0)

    rvm.register_func("env.linear", linear, override=True)
    rvm.register_func("test.repeat2", repeat2, override=True)


@I.ir_module
class Batched:
    @R.function
    def main(x: R.Tensor(("batch", "m"), "float32"), w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n",), "float32")):
        batch, m, n = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((batch, n), "float32"))
            out = R.call_dps_packed("test.repeat2", (lv0,),
                                    R.Tensor((batch * 2, n), "float32"))
            R.output(out)
        return out


def _weights():
    rng = np.random.default_rng(0)
    return rng.standard_normal((16, 8)).astype("float32"), rng.standard_normal(16).astype(
        "float32")


def test_one_executable_runs_batch_1_and_7():
    vm = _vm(Batched)
    w, b = _weights()
    for batch in (1, 7):
        x = np.random.default_rng(batch).standard_normal((batch, 8)).astype("float32")
        out = vm["main"](x, w, b).numpy()
        assert out.shape == (2 * batch, 16)
        ref = x @ w.T + b
        np.testing.assert_allclose(out, np.concatenate([ref, ref]), rtol=1e-5, atol=1e-5)


def test_boundary_errors_name_function_parameter_and_values():
    vm = _vm(Batched)
    w, b = _weights()
    x = np.zeros((3, 8), "float32")
    with pytest.raises(ValueError, match=r"main: parameter 'w0' expects float32\[n, m\].*"
                                         r"expected 8.*got 9"):
        vm["main"](x, np.zeros((16, 9), "float32"), b)
    with pytest.raises(ValueError, match=r"main: parameter 'b0' expects float32\[n\].*"
                                         r"expected 16.*got 15"):
        vm["main"](x, w, np.zeros(15, "float32"))
    with pytest.raises(ValueError, match=r"main: parameter 'x' expects float32\[batch, m\]: "
                                         r"expected dtype float32, got float64"):
        vm["main"](x.astype("float64"), w, b)
    with pytest.raises(ValueError, match=r"main: parameter 'w0' expects float32\[n, m\]: "
                                         r"expected a Tensor of rank 2, got rank 3"):
        vm["main"](x, w[None], b)
    with pytest.raises(TypeError, match=r"main.*3.*got 2"):
        vm["main"](x, w)


@I.ir_module
class Control:
    @R.function
    def double(x: R.Tensor(("n",), "float32")):
        y = R.add(x, x)
        return y

    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Control
        if c:
            r = cls.double(x)
        else:
            r = R.multiply(x, x)
        return r


def test_if_and_calls_between_relax_functions():
    vm = _vm(Control)
    x = np.arange(5, dtype="float32")
    np.testing.assert_allclose(vm["main"](np.array(True), x).numpy(), x + x)
    np.testing.assert_allclose(vm["main"](np.array(False), x).numpy(), x * x)


@I.ir_module
class Tuples:
    @R.function
    def main(t: R.Tuple(R.Tensor((2, "n"), "float32"), R.Tensor(("n",), "float32"))):
        n = T.int64()
        a = t[0]
        b = t[1]
        s = R.add(a, b)
        d = R.subtract(a, b)
        return (s, (d, b))


def test_tuple_inputs_and_outputs():
    vm = _vm(Tuples)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.array([1, 2, 3], "float32")
    s, (d, b2) = vm["main"]((rvm.nd.array(a), rvm.nd.array(b)))
    np.testing.assert_allclose(s.numpy(), a + b)
    np.testing.assert_allclose(d.numpy(), a - b)
    np.testing.assert_allclose(b2.numpy(), b)
    with pytest.raises(ValueError, match=r"main: parameter 't' field 1 expects float32\[n\]"):
        vm["main"]((rvm.nd.array(a), rvm.nd.array(np.zeros(4, "float32"))))
    with pytest.raises(ValueError, match=r"main: parameter 't' expects Tuple.*2 fields, got 1"):
        vm["main"]((rvm.nd.array(a),))


@I.ir_module
class Casting:
    @R.function
    def main(x: R.Tensor(dtype="float32")):
        m = T.int64()
        y = R.match_cast(x, R.Tensor((m,), "float32"))
        z = R.add(y, y)
        s = R.shape([m, m * 2, m + 1, m // 4])
        return (z, s)


def test_match_cast_and_derived_dimensions():
    vm = _vm(Casting)
    x = np.arange(9, dtype="float32")
    z, s = vm["main"](x)
    np.testing.assert_allclose(z.numpy(), x + x)
    assert tuple(s) == (9, 18, 10, 2)
    with pytest.raises(ValueError, match=r"main: match_cast of 'y' expects float32\[m\]"):
        vm["main"](np.zeros((2, 2), "float32"))


@I.ir_module
class Static:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32")):
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.nn.relu(a)
            c = R.matmul(b, w)
            d = R.nn.relu(c)
            e = R.add(d, x)
            R.output(e)
        return e


def test_steady_state_allocates_only_the_returned_output():
    vm = _vm(Static)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype("float32")
    w = rng.standard_normal((8, 8)).astype("float32")
    ref = np.maximum(np.maximum(x @ w, 0) @ w, 0) + x
    outputs = [vm["main"](x, w) for _ in range(2)]  # warm up; keep outputs alive
    before = vm.memory_stats()[0]["allocations"]
    for _ in range(3):
        outputs.append(vm["main"](x, w))
    after = vm.memory_stats()[0]["allocations"]
    assert after - before == 3  # one fresh allocation per call: the returned tensor
    for out in outputs:
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


def _storages(mod):
    return [b for b in mod["main"].body.blocks[0].bindings
            if getattr(b.value, "op", None) is not None
            and getattr(b.value.op, "name", "") == "relax.vm.alloc_storage"]


def test_static_intermediates_share_planned_storage():
    with PassContext(opt_level=0):  # no fusion: five kernels
        lowered = default_build_pipeline()(Static)
    # four intermediates, two storages (each reused once), plus the output's own storage
    assert len(_storages(lowered)) == 3
    # fused: (matmul, relu) and (matmul, relu, add), one intermediate and the output
    assert len(_storages(default_build_pipeline()(Static))) == 2


def test_call_tir_with_symbolic_output_only_dimension():
    from rvm import tir
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import ShapeExpr, Var
    from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
    from rvm.runtime.container import ShapeTuple
    from rvm.te.operation import compute

    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    s = Var("s", ShapeStructInfo([m]))

    def fill(x, shape):
        return compute((shape[0],), lambda i: x[0] + 1.0, name="fill")

    bb = BlockBuilder()
    with bb.function("main", [x, s]):
        y = bb.emit_te(fill, x, ShapeExpr([m]))
        bb.emit_func_output(y)
    vm = _vm(bb.get())
    out = vm["main"](np.array([3.0, 4.0], "float32"), ShapeTuple([5])).numpy()
    np.testing.assert_array_equal(out, np.full(5, 4.0, "float32"))
