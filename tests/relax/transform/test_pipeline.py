"""The default pipeline: SPEC programs lower, build and run; the output meets the contract;
parameters fold, kernels fuse (not at opt_level 0)."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.driver.relax_build import lower
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.tir.function import PrimFunc
from rvm.relax.transform.bind_params import BindParams
from rvm.ir.transform import PassContext, get_pipeline
from rvm.relax.transform.pipeline import default_build_pipeline

from tests.relax.transform.contract import check_contract
from tests.relax.transform.spec_modules import (
    MyModule, MyModuleMixture, MyModuleWithEnv, mlp_params, mlp_reference,
)


@pytest.fixture(autouse=True)
def env_functions():
    def linear(x, w, b, out):
        np.matmul(np.from_dlpack(x), np.from_dlpack(w).T, out=np.from_dlpack(out))
        np.from_dlpack(out)[...] += np.from_dlpack(b)

    def relu(x, out):
        np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))

    rvm.register_func("env.linear", linear, override=True)
    rvm.register_func("env.relu", relu, override=True)


def _run(mod, *args, target="python"):
    vm = relax.VirtualMachine(relax.build(mod, target=target), rvm.cpu())
    return vm["main"](*args).numpy()


def test_pipeline_is_registered_as_default():
    assert get_pipeline("default").info.name == "default_build_pipeline"
    assert default_build_pipeline().info.name == "default_build_pipeline"


@pytest.mark.parametrize("mod", [MyModule, MyModuleWithEnv, MyModuleMixture],
                         ids=["tensorir", "env", "mixture"])
def test_spec_modules_lower_to_the_contract_and_run(mod):
    lowered = default_build_pipeline()(mod)
    check_contract(lowered)
    p = mlp_params()
    x = np.random.default_rng(1).standard_normal((1, 784)).astype("float32")
    out = _run(mod, x, p["w0"], p["b0"], p["w1"], p["b1"])
    np.testing.assert_allclose(out, mlp_reference(x, p), rtol=1e-4, atol=1e-4)


def test_spec_module_with_the_c_target():
    p = mlp_params()
    x = np.random.default_rng(2).standard_normal((1, 784)).astype("float32")
    out = _run(MyModuleMixture, x, p["w0"], p["b0"], p["w1"], p["b1"], target="c")
    np.testing.assert_allclose(out, mlp_reference(x, p), rtol=1e-4, atol=1e-4)


def test_bind_params_then_main_of_x():
    p = mlp_params()
    mod2 = BindParams("main", {k: rvm.nd.array(v) for k, v in p.items()})(MyModuleMixture)
    check_contract(default_build_pipeline()(mod2))
    x = np.random.default_rng(3).standard_normal((1, 784)).astype("float32")
    np.testing.assert_allclose(_run(mod2, x), mlp_reference(x, p), rtol=1e-4, atol=1e-4)


@I.ir_module
class HighLevelMLP:
    @R.function
    def main(x: R.Tensor(("n", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            w0t = R.permute_dims(w0)
            lv0 = R.matmul(x, w0t)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            w1t = R.permute_dims(w1)
            lv3 = R.matmul(lv2, w1t)
            out = R.add(lv3, b1)
            R.output(out)
        return out


def _kernels(mod):
    """The compute kernels (not VMShapeLower's shape functions)."""
    return sorted(gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func"))


def test_the_high_level_mlp_builds_into_two_fused_kernels():
    lowered = default_build_pipeline()(HighLevelMLP)
    check_contract(lowered)
    assert _kernels(lowered) == ["fused_NT_matmul1_add1", "fused_NT_matmul_add_relu"]
    p = mlp_params()
    vm = relax.VirtualMachine(relax.build(HighLevelMLP), rvm.cpu())
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch, 784)).astype("float32")
        out = vm["main"](x, p["w0"], p["b0"], p["w1"], p["b1"]).numpy()
        np.testing.assert_allclose(out, mlp_reference(x, p), rtol=1e-4, atol=1e-4)


def test_bound_parameters_fold_and_the_kernels_still_fuse():
    p = mlp_params()
    params = {k: rvm.nd.array(v) for k, v in p.items()}
    lowered = lower(HighLevelMLP, params=params)
    assert _kernels(lowered) == ["fused_NT_matmul1_add1", "fused_NT_matmul_add_relu"]
    vm = relax.VirtualMachine(relax.build(HighLevelMLP, params=params), rvm.cpu())
    x = np.random.default_rng(5).standard_normal((3, 784)).astype("float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), mlp_reference(x, p), rtol=1e-4,
                               atol=1e-4)


@I.ir_module
class ScaledWeight:
    @R.function
    def main(x: R.Tensor((4,), "float32"), w: R.Tensor((4,), "float32")):
        with R.dataflow():
            w2 = R.multiply(w, R.const(2, "float32"))
            y = R.add(x, w2)
            R.output(y)
        return y


def test_computations_on_bound_parameters_run_at_compile_time():
    w = np.arange(4, dtype="float32")
    lowered = lower(ScaledWeight, params={"w": rvm.nd.array(w)})
    assert _kernels(lowered) == ["add"]
    vm = relax.VirtualMachine(relax.build(ScaledWeight, params={"w": w}), rvm.cpu())
    np.testing.assert_array_equal(vm["main"](np.ones(4, "float32")).numpy(), 1 + 2 * w)


def test_opt_level_zero_turns_fusion_off():
    with PassContext(opt_level=0):
        lowered = default_build_pipeline()(HighLevelMLP)
        ex = relax.build(HighLevelMLP)
    assert _kernels(lowered) == ["add", "add1", "matmul", "matmul1", "relu", "transpose",
                                 "transpose1"]
    p = mlp_params()
    x = np.random.default_rng(6).standard_normal((2, 784)).astype("float32")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](x, p["w0"], p["b0"], p["w1"], p["b1"])
    np.testing.assert_allclose(out.numpy(), mlp_reference(x, p), rtol=1e-4, atol=1e-4)
