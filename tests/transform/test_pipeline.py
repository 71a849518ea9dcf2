"""The default pipeline: SPEC programs lower, build and run; the output meets the contract."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.transform.bind_params import BindParams
from rvm.transform.pass_infra import get_pipeline
from rvm.transform.pipeline import default_build_pipeline

from tests.transform.contract import check_contract
from tests.transform.spec_modules import (
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
