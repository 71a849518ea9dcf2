"""SPEC §5 as written: functions from the environment, alone and mixed with TensorIR."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I, relax as R, tir as T
from tests.e2e.test_spec_4_build_and_run import mlp_inputs, numpy_mlp

CALLS = []


@pytest.fixture(autouse=True)
def env_functions():
    """The seed's environment functions, registered as SPEC §5 writes them."""
    saved = {name: rvm.get_global_func(name, allow_missing=True)
             for name in ("env.linear", "env.relu")}

    @rvm.register_func("env.linear", override=True)
    def torch_linear(x, w, b, out):             # NDArrays; out is pre-allocated (DPS)
        CALLS.append(("env.linear", type(out).__name__))
        np.matmul(np.from_dlpack(x), np.from_dlpack(w).T, out=np.from_dlpack(out))
        np.from_dlpack(out)[...] += np.from_dlpack(b)

    @rvm.register_func("env.relu", override=True)
    def relu(x, out):
        CALLS.append(("env.relu", type(out).__name__))
        np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))

    CALLS.clear()
    yield
    for name, func in saved.items():
        if func is None:
            rvm.runtime.remove_global_func(name)
        else:
            rvm.register_func(name, func, override=True)


@I.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"), b0: R.Tensor(("n",), "float32"),
             w1: R.Tensor(("k", "n"), "float32"), b1: R.Tensor(("k",), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


@I.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n,), "float32")
        Z = T.match_buffer(z, (1, n), "float32")
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, k in T.grid(1, n, m):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"), b0: R.Tensor(("n",), "float32"),
             w1: R.Tensor(("k", "n"), "float32"), b1: R.Tensor(("k",), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


def _run(mod, seed=0):
    x, p = mlp_inputs(seed)
    ex = relax.build(mod, target="c")
    vm = relax.VirtualMachine(ex, rvm.cpu())
    nd_params = {k: rvm.nd.array(v) for k, v in p.items()}
    out = vm["main"](rvm.nd.array(x), nd_params["w0"], nd_params["b0"], nd_params["w1"],
                     nd_params["b1"])
    return out, numpy_mlp(x, p)


def test_environment_functions_only():
    out, expected = _run(MyModuleWithExternCall)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert CALLS == [("env.linear", "NDArray"), ("env.relu", "NDArray"),
                     ("env.linear", "NDArray")]


def test_mixture_of_tensorir_and_environment():
    out, expected = _run(MyModuleMixture, seed=1)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert [name for name, _ in CALLS] == ["env.relu", "env.linear"]


def test_own_kernel_shadows_a_registered_function_of_the_same_name():
    saved = rvm.get_global_func("linear0", allow_missing=True)
    rvm.register_func("linear0", lambda *args: CALLS.append(("registry linear0", "")),
                      override=True)
    try:
        out, expected = _run(MyModuleMixture, seed=2)
    finally:
        if saved is None:
            rvm.runtime.remove_global_func("linear0")
        else:
            rvm.register_func("linear0", saved, override=True)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert ("registry linear0", "") not in CALLS


def test_environment_function_writes_into_the_vm_tensor_zero_copy():
    views = []

    @rvm.register_func("env.relu", override=True)
    def relu(x, out):
        view = np.from_dlpack(out)
        np.maximum(np.from_dlpack(x), 0, out=view)
        views.append(view)

    x, p = mlp_inputs(3)
    ex = relax.build(MyModuleWithExternCall)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    vm["main"](x, p["w0"], p["b0"], p["w1"], p["b1"])
    # the view shares memory with the tensor the VM allocated: it is not a copy
    assert views and not views[0].flags.owndata


def test_missing_environment_function_is_named():
    @I.ir_module
    class Missing:
        @R.function
        def main(x: R.Tensor((1, 4), "float32")):
            with R.dataflow():
                y = R.call_dps_packed("env.nowhere_to_be_found", (x,),
                                      R.Tensor((1, 4), "float32"))
                R.output(y)
            return y

    ex = relax.build(Missing)
    with pytest.raises(ValueError, match="env.nowhere_to_be_found"):
        relax.VirtualMachine(ex, rvm.cpu())


def test_error_in_an_environment_function_names_the_binding():
    @rvm.register_func("env.relu", override=True)
    def relu(x, out):
        raise RuntimeError("relu exploded")

    x, p = mlp_inputs()
    vm = relax.VirtualMachine(relax.build(MyModuleMixture), rvm.cpu())
    with pytest.raises(RuntimeError, match="relu exploded") as info:
        vm["main"](x, p["w0"], p["b0"], p["w1"], p["b1"])
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "main" in notes and "env.relu" in notes and "lv1" in notes
