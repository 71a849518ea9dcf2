"""One executable, a symbolic batch dimension: any batch runs; bad arguments raise clear errors."""
import numpy as np
import pytest

import rvm
from rvm.driver.relax_build import build
from rvm.script import ir as I, relax as R, tir as T
from rvm.vm.machine import VirtualMachine


@I.ir_module
class BatchedMLP:
    @T.prim_func
    def linear(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
        batch, m, n = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (batch, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n,), "float32")
        Z = T.match_buffer(z, (batch, n), "float32")
        for i, j, k in T.grid(batch, n, m):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def relu(x: T.handle, y: T.handle):
        batch, n = T.int64(), T.int64()
        X = T.match_buffer(x, (batch, n), "float32")
        Y = T.match_buffer(y, (batch, n), "float32")
        for i, j in T.grid(batch, n):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("batch", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        batch = T.int64()
        cls = BatchedMLP
        with R.dataflow():
            lv0 = R.call_tir(cls.linear, (x, w0, b0), out_sinfo=R.Tensor((batch, 128), "float32"))
            lv1 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((batch, 128), "float32"))
            out = R.call_tir(cls.linear, (lv1, w1, b1), out_sinfo=R.Tensor((batch, 10), "float32"))
            R.output(out)
        return out


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 0.05).astype("float32")
            for s in ((128, 784), (128,), (10, 128), (10,))]


def _reference(x, w0, b0, w1, b1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1


@pytest.fixture(scope="module")
def executable():
    return build(BatchedMLP, target="c")


@pytest.fixture(scope="module")
def vm(executable, vm_engine):
    """The VM of this module's engine row (one executable serves both engines)."""
    return VirtualMachine(executable, rvm.cpu(), engine=vm_engine)


def test_the_vm_runs_on_the_engine_of_its_row(vm, vm_engine):
    assert vm.engine == vm_engine


@pytest.mark.parametrize("batch", [1, 7, 64])
def test_any_batch_runs_on_one_executable(vm, batch):
    params = _params()
    x = np.random.default_rng(batch).random((batch, 784), dtype=np.float32)
    out = vm["main"](x, *params)
    assert out.shape == (batch, 10)
    np.testing.assert_allclose(out.numpy(), _reference(x, *params), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_python_target_agrees():
    # the reference target runs each kernel element by element (784 x 128 multiply-adds a
    # row): two rows are a symbolic batch other than 1, as seven were, at a fifth the cost
    params = _params(1)
    x = np.random.default_rng(7).random((2, 784), dtype=np.float32)
    out = VirtualMachine(build(BatchedMLP, target="python"))["main"](x, *params)
    np.testing.assert_allclose(out.numpy(), _reference(x, *params), rtol=1e-5, atol=1e-5)


def test_mismatched_weight_shape_names_function_parameter_and_shapes(vm):
    w0, b0, w1, b1 = _params()
    x = np.zeros((3, 784), "float32")
    with pytest.raises(ValueError) as info:
        vm["main"](x, w0[:, :700].copy(), b0, w1, b1)
    message = str(info.value)
    assert "main" in message and "'w0'" in message
    assert "784" in message and "700" in message


def test_wrong_dtype(vm):
    w0, b0, w1, b1 = _params()
    with pytest.raises(ValueError, match=r"main: parameter 'b1'.*float32.*float64"):
        vm["main"](np.zeros((2, 784), "float32"), w0, b0, w1, b1.astype("float64"))


def test_wrong_rank(vm):
    w0, b0, w1, b1 = _params()
    with pytest.raises(ValueError, match=r"main: parameter 'x'.*rank 2, got rank 3"):
        vm["main"](np.zeros((1, 2, 784), "float32"), w0, b0, w1, b1)


def test_wrong_argument_count(vm):
    w0, b0, w1, b1 = _params()
    with pytest.raises(TypeError, match=r"main\(\) takes 5 argument\(s\) \(x, w0, b0, w1, b1\), "
                                        r"got 6"):
        vm["main"](np.zeros((2, 784), "float32"), w0, b0, w1, b1, b1)


def test_not_a_tensor(vm):
    w0, b0, w1, b1 = _params()
    with pytest.raises(TypeError, match=r"main: parameter 'x'.*Tensor"):
        vm["main"]("not a tensor", w0, b0, w1, b1)


@I.ir_module
class WithScalar:
    @R.function
    def main(x: R.Tensor((2,), "float32"), k: R.Prim("int32")):
        return (x, k)


def test_scalar_parameter_of_the_wrong_kind_or_range():
    vm = VirtualMachine(build(WithScalar), rvm.cpu())
    x = np.ones(2, "float32")
    assert vm["main"](x, 3)[1] == 3
    with pytest.raises(TypeError, match=r"main: parameter 'k' expects int32: expected a value "
                                        r"of dtype int32, got float"):
        vm["main"](x, 2.5)
    with pytest.raises(ValueError, match=r"main: parameter 'k' expects int32: 4294967296 does "
                                         r"not fit in int32"):
        vm["main"](x, 1 << 32)


@I.ir_module
class WithCallable:
    @R.function
    def apply(f: R.Callable((R.Tensor((2,), "float32"),), R.Tensor((2,), "float32")),
              x: R.Tensor((2,), "float32")):
        y = f(x)
        return y


def test_callable_parameter_that_is_not_a_function():
    vm = VirtualMachine(build(WithCallable), rvm.cpu())
    x = np.ones(2, "float32")
    np.testing.assert_array_equal(vm["apply"](lambda t: t, x).numpy(), x)
    with pytest.raises(TypeError, match=r"apply: parameter 'f' expects Callable: expected a "
                                        r"function, got int"):
        vm["apply"](3, x)
