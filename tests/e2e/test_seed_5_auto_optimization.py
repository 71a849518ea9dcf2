"""Seed 004 §5.3 and §5.4 as written (``tvm`` replaced by ``rvm``), with small trial counts:
tune_tir with and without a space, compile_tir, and linear0 taken out of the MLP, tuned,
swapped back in with update_func and rebuilt, giving the same predictions."""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from tests.meta_schedule.workloads import MyModule, MyModuleMixture, stochastic_schedule_mm


@pytest.fixture
def env_functions():
    @rvm.register_func("env.linear", override=True)
    def torch_linear(x, w, b, out):
        np.matmul(np.from_dlpack(x), np.from_dlpack(w).T, out=np.from_dlpack(out))
        np.from_dlpack(out)[...] += np.from_dlpack(b)

    @rvm.register_func("env.relu", override=True)
    def lnumpy_relu(x, out):
        np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))


@pytest.mark.slow
def test_section_5_3_tune_tir(tmp_path):
    work_dir = str(tmp_path / "tune_tmp")
    database = ms.tune_tir(
        mod=MyModule,
        target="llvm --num-cores=1",
        max_trials_global=4,
        num_trials_per_iter=4,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir=work_dir,
        task_name="main"
    )
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    assert "sample_perfect_tile" in str(sch.trace)

    database = ms.tune_tir(
        mod=MyModule,
        target="llvm --num-cores=1",
        max_trials_global=8,
        num_trials_per_iter=4,
        work_dir=str(tmp_path / "tune_default"),
        task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    a_np = np.random.rand(128, 128).astype("float32")
    b_np = np.random.rand(128, 128).astype("float32")
    a_nd, b_nd = rvm.nd.array(a_np), rvm.nd.array(b_np)
    c_nd = rvm.nd.empty((128, 128), dtype="float32")
    lib = rvm.build(sch.mod, target="llvm")
    lib["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4, atol=1e-4)
    assert lib.time_evaluator("main", rvm.cpu())(a_nd, b_nd, c_nd).mean > 0


@pytest.mark.slow
def test_section_5_4_tuned_linear0_swapped_in(tmp_path, env_functions):
    rng = np.random.default_rng(0)
    mlp_params = {"w0": rng.standard_normal((128, 784)).astype("float32"),
                  "b0": rng.standard_normal(128).astype("float32"),
                  "w1": rng.standard_normal((10, 128)).astype("float32"),
                  "b1": rng.standard_normal(10).astype("float32")}
    img = rng.uniform(size=(28, 28)).astype("float32")
    data_nd = rvm.nd.array(img.reshape(1, 784))
    nd_params = {k: rvm.nd.array(v) for k, v in mlp_params.items()}

    MyModuleWithParams = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    ex = relax.build(MyModuleWithParams, target="llvm")
    vm = relax.VirtualMachine(ex, rvm.cpu())
    before = vm["main"](data_nd).numpy()

    mod_linear = rvm.IRModule.from_expr(MyModuleMixture["linear0"].with_attr("global_symbol",
                                                                           "main"))
    database = ms.tune_tir(
        mod=mod_linear,
        target="llvm --num-cores=1",
        max_trials_global=6,
        num_trials_per_iter=6,
        work_dir=str(tmp_path / "tune_tmp"),
        task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, mod_linear, "llvm --num-cores=1")

    MyModuleWithParams2 = relax.transform.BindParams("main", nd_params)(MyModuleMixture)
    new_func = sch.mod["main"].with_attr("global_symbol", "linear0")
    gv = MyModuleWithParams2.get_global_var("linear0")
    MyModuleWithParams2.update_func(gv, new_func)

    ex = relax.build(MyModuleWithParams2, target="llvm")
    vm = relax.VirtualMachine(ex, rvm.cpu())
    nd_res = vm["main"](data_nd)
    np.testing.assert_allclose(nd_res.numpy(), before, rtol=1e-4, atol=1e-4)
    assert np.argmax(nd_res.numpy(), axis=1) == np.argmax(before, axis=1)
    ftimer = vm.module.time_evaluator("main", rvm.cpu(), number=10)
    assert ftimer(data_nd).mean > 0
