"""SPEC §6 as written: bind the parameters, run ``main(x)``, swap a kernel and rebuild."""
import numpy as np

import rvm
from rvm import relax
from rvm.script import tir as T
from tests.e2e.test_spec_4_build_and_run import mlp_inputs, numpy_mlp
from tests.e2e.test_spec_5_environment_functions import (  # noqa: F401  (fixture)
    MyModuleMixture, env_functions,
)


@T.prim_func
def tuned_linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                  B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    Y = T.alloc_buffer((1, 128), "float32")
    for i, j0, k, j1 in T.grid(1, 32, 784, 4):
        with T.block("Y"):
            vi = T.axis.spatial(1, i)
            vj = T.axis.spatial(128, j0 * 4 + j1)
            vk = T.axis.reduce(784, k)
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, 128):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]


@T.prim_func
def doubled_linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                    B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
    T.func_attr({"global_symbol": "linear0"})
    for i, j, k in T.grid(1, 128, 784):
        with T.block("Z"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Z[vi, vj] = B[vj] * T.float32(2)
            Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk] * T.float32(2)


def _bound_module(p):
    nd_params = {k: rvm.nd.array(v) for k, v in p.items()}   # "w0", "b0", ...
    return relax.transform.BindParams("main", nd_params)(MyModuleMixture)


def test_bind_params_then_main_of_x(capsys):
    x, p = mlp_inputs()
    mod2 = _bound_module(p)
    print(mod2.script(show_meta=True))             # constants shown with show_meta
    assert "metadata" in capsys.readouterr().out
    vm = relax.VirtualMachine(relax.build(mod2), rvm.cpu())
    out = vm["main"](rvm.nd.array(x))              # only the data input remains
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)
    assert vm.executable.function_info("main").param_names == ("x",)


def test_build_with_params_argument_binds_main():
    x, p = mlp_inputs(1)
    ex = relax.build(MyModuleMixture, params={k: rvm.nd.array(v) for k, v in p.items()})
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](x)
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)


def test_update_func_swaps_in_a_tuned_kernel():
    x, p = mlp_inputs(2)
    mod2 = _bound_module(p)
    gv = mod2.get_global_var("linear0")
    mod2.update_func(gv, tuned_linear0)            # swap in a tuned kernel, rebuild
    vm = relax.VirtualMachine(relax.build(mod2), rvm.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)


def test_update_func_with_a_different_kernel_changes_the_result():
    x, p = mlp_inputs(3)
    mod2 = _bound_module(p)
    mod2.update_func(mod2.get_global_var("linear0"), doubled_linear0)
    vm = relax.VirtualMachine(relax.build(mod2), rvm.cpu())
    expected = np.maximum(2 * (x @ p["w0"].T + p["b0"]), 0) @ p["w1"].T + p["b1"]
    np.testing.assert_allclose(vm["main"](x).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(expected, numpy_mlp(x, p))


def test_bound_weights_are_pooled_constants():
    x, p = mlp_inputs(4)
    ex = relax.build(_bound_module(p))
    tensors = [c for c in ex.constants if isinstance(c, rvm.nd.NDArray)]
    assert sorted(t.shape for t in tensors) == sorted(v.shape for v in p.values())
