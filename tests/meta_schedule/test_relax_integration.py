"""tune_relax over a Relax MLP, then relax.transform.MetaScheduleApplyDatabase and build:
tasks deduplicated and weighted, tuned kernels swapped in, same results."""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from rvm.meta_schedule.apply_database import OPAQUE
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741
from tests.meta_schedule.workloads import MyModuleMixture


@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w0: R.Tensor((32, 64), "float32"),
             b0: R.Tensor((32,), "float32"), w1: R.Tensor((10, 32), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, R.permute_dims(w0))
            lv1 = R.nn.relu(R.add(lv0, b0))
            lv2 = R.add(R.matmul(lv1, R.permute_dims(w1)), b1)
            R.output(lv2)
        return lv2


@I.ir_module
class Twice:
    """One kernel under two names, called at three places (environment functions between
    them keep fusion away): one task of weight 3."""

    @T.prim_func
    def add_one(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def add_one_again(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for j in range(64):
            with T.block("C"):
                vj = T.axis.spatial(64, j)
                B[vj] = A[vj] + T.float32(1)

    @R.function
    def main(x: R.Tensor((64,), "float32")):
        cls = Twice
        with R.dataflow():
            a = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((64,), "float32"))
            b = R.call_dps_packed("env.relu", (a,), R.Tensor((64,), "float32"))
            c = R.call_tir(cls.add_one_again, (b,), out_sinfo=R.Tensor((64,), "float32"))
            d = R.call_dps_packed("env.relu", (c,), R.Tensor((64,), "float32"))
            e = R.call_tir(cls.add_one, (d,), out_sinfo=R.Tensor((64,), "float32"))
            R.output(e)
        return e


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w0": rng.standard_normal((32, 64)).astype("float32"),
            "b0": rng.standard_normal(32).astype("float32"),
            "w1": rng.standard_normal((10, 32)).astype("float32"),
            "b1": rng.standard_normal(10).astype("float32")}


def test_tasks_are_deduplicated_and_weighted():
    tasks = ms.relax_integration.extract_tasks(Twice, "c")
    assert [(t.task_name, t.weight) for t in tasks] == [("add_one", 3)]
    assert len(tasks[0].dispatched) == 2
    mlp = ms.relax_integration.extract_tasks(MLP, "c")
    assert [t.task_name for t in mlp] == ["fused_NT_matmul_add_relu", "fused_NT_matmul1_add1"]


def test_bound_weights_are_transposed_once_at_build_time_for_tuning():
    """A transposed bound weight is folded into a constant (in, out): the task is a plain
    matmul whose weight is read along the output axis, and applying records gives the
    same results."""
    params = _params()
    bound = relax.transform.BindParams("main", {k: rvm.nd.array(v)
                                                for k, v in params.items()})(MLP)
    tasks = ms.relax_integration.extract_tasks(bound, "c")
    assert [t.task_name for t in tasks] == ["fused_matmul_add_relu", "fused_matmul1_add1"]
    kernel = tasks[0].mod["main"]
    assert [tuple(int(d) for d in kernel.buffer_map[p].shape) for p in kernel.params[:2]] == \
        [(8, 64), (64, 32)]
    vm = relax.VirtualMachine(relax.build(ms.extracted_task.prepare_for_tuning(bound),
                                          target="c"), rvm.cpu())
    x = np.random.default_rng(1).standard_normal((8, 64)).astype("float32")
    hidden = np.maximum(x @ params["w0"].T + params["b0"], 0)
    np.testing.assert_allclose(vm["main"](x).numpy(), hidden @ params["w1"].T + params["b1"],
                               rtol=1e-4, atol=1e-4)


def test_kernels_with_symbolic_shapes_are_skipped():
    from rvm.script import from_source
    from tests.spec_programs import MY_MODULE

    tasks = ms.relax_integration.extract_tasks(from_source(MY_MODULE), "c")
    assert list(tasks) == []
    assert [name for name, _ in tasks.skipped] == ["linear0", "relu0"]
    assert "symbolic shapes" in tasks.skipped[0][1]
    bound = ms.relax_integration.extract_tasks(MyModuleMixture, "c")
    assert [t.task_name for t in bound] == ["linear0"]


@pytest.mark.slow
def test_tune_relax_then_apply_the_database(tmp_path):
    params = _params()
    work_dir = str(tmp_path / "tune_tmp")
    ms.relax_integration.tune_relax(
        MLP, params={}, target="c", work_dir=work_dir, max_trials_global=6,
        num_trials_per_iter=3,
        runner=LocalRunner(evaluator_config=EvaluatorConfig(number=1, repeat=1,
                                                            min_repeat_ms=0)),
        strategy="replay-trace", seed=0)
    mod = relax.transform.MetaScheduleApplyDatabase(work_dir)(MLP)
    tuned = [gv.name_hint for gv, f in mod.functions.items()
             if isinstance(f, rvm.tir.PrimFunc) and f.get_attr("op_pattern") == OPAQUE]
    assert sorted(tuned) == ["fused_NT_matmul1_add1", "fused_NT_matmul_add_relu"]
    vm = relax.VirtualMachine(relax.build(mod, target="c"), rvm.cpu())
    x = np.random.default_rng(1).standard_normal((8, 64)).astype("float32")
    out = vm["main"](x, *[params[k] for k in ("w0", "b0", "w1", "b1")]).numpy()
    hidden = np.maximum(x @ params["w0"].T + params["b0"], 0)
    np.testing.assert_allclose(out, hidden @ params["w1"].T + params["b1"], rtol=1e-4,
                               atol=1e-4)
    ex = ms.relax_integration.compile_relax(ms.database.JSONDatabase(work_dir=work_dir), MLP,
                                            "c")
    again = relax.VirtualMachine(ex, rvm.cpu())["main"](
        x, *[params[k] for k in ("w0", "b0", "w1", "b1")]).numpy()
    np.testing.assert_allclose(again, out, rtol=1e-6)


def test_apply_database_needs_a_database():
    with pytest.raises(ValueError, match="needs a work_dir or an active database"):
        relax.transform.MetaScheduleApplyDatabase()(MLP)
    with ms.database.MemoryDatabase():
        with pytest.warns(RuntimeWarning, match="no tuning records for"):
            relax.transform.MetaScheduleApplyDatabase(enable_warning=True)(MLP)
