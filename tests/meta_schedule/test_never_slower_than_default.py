"""A tuned build is never slower than the default one, by construction: each task measures
its default schedule's trace in the same runner session as its candidates, the database
ranks it first when it measured fastest, the build applies it; and a kernel whose best
record no longer replays keeps the default rule's schedule (not the unscheduled loop nest).
"""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from rvm.dlight import CPUInfo, DefaultCPUSchedule
from rvm.ir.base import assert_structural_equal
from rvm.meta_schedule.apply_database import apply_database
from rvm.meta_schedule.database import MemoryDatabase, TuningRecord
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.extracted_task import prepare_for_tuning
from rvm.meta_schedule.postproc import RewriteParallelVectorizeUnroll
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.meta_schedule.schedule_rule import PyScheduleRule
from rvm.meta_schedule.search_strategy.search_strategy import candidate_hash
from rvm.script import ir as I, relax as R  # noqa: E741
from rvm.tir.function import PrimFunc
from tests.dlight.test_conv_channels import _conv_func
from tests.meta_schedule.workloads import MyModule

TARGET = "llvm --num-cores=1"
FAST = EvaluatorConfig(number=3, repeat=3, min_repeat_ms=0)


class ColumnsOutermost(PyScheduleRule):
    """A deliberately bad schedule: a matmul's reduction loop outermost, then its rows
    innermost, so every multiply-add reads the weight a row apart and the output is
    re-read from memory at every step (no vector, no tile)."""

    def apply(self, sch, block):
        loops = sch.get_loops(block)
        if len(loops) == 3 and sch.get(block).init is not None:
            i, j, k = loops
            sch.reorder(k, j, i)
        return [sch]


@I.ir_module
class Layer:
    @R.function
    def main(x: R.Tensor((64, 256), "float32"), w: R.Tensor((256, 192), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y


def _kernels(mod):
    return {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}


@pytest.mark.slow
def test_when_every_candidate_is_slower_the_build_applies_the_default_kernel(tmp_path):
    space = ms.space_generator.PostOrderApply(sch_rules=[ColumnsOutermost()])
    database = ms.relax_integration.tune_relax(
        Layer, {}, TARGET, str(tmp_path), max_trials_global=8, num_trials_per_iter=4,
        space=space, runner=LocalRunner(evaluator_config=FAST), cost_model="random",
        seed=0, progress=False)
    (task,) = ms.relax_integration.extract_tasks(Layer, TARGET)
    workload = database.commit_workload(task.mod)
    records = [r for r in database.records_of(workload) if r.is_valid]
    default = candidate_hash(default_schedule(task.mod, TARGET, task.layout_free))
    # measured: the default kernel, the unscheduled one, the bad candidate
    assert default in {r.candidate_hash for r in records} and len(records) >= 3
    best = database.get_top_k(workload, 1)[0]
    assert best.candidate_hash == default
    tuned = apply_database(Layer, database, TARGET)
    expected = DefaultCPUSchedule(info=CPUInfo.from_target(TARGET))(prepare_for_tuning(Layer))
    name = task.task_name
    assert_structural_equal(_kernels(tuned)[name].with_fields(attrs={}),
                            _kernels(expected)[name].with_fields(attrs={}))
    x = np.random.default_rng(0).standard_normal((64, 256)).astype("float32")
    w = np.random.default_rng(1).standard_normal((256, 192)).astype("float32")
    out = relax.VirtualMachine(relax.build(tuned, target="c"), rvm.cpu())["main"](x, w)
    np.testing.assert_allclose(out.numpy(), x @ w, rtol=1e-4, atol=1e-4)


def _record_of(database, mod, trace_json):
    workload = database.commit_workload(mod)
    record = TuningRecord(trace_json, workload, run_secs=[1e-6], target=TARGET,
                          fingerprint="fp")
    database.commit_tuning_record(record)
    return record


def test_a_best_record_that_does_not_replay_leaves_the_kernel_to_the_default_rule():
    (task,) = ms.relax_integration.extract_tasks(Layer, TARGET)
    # a trace whose instruction this version does not know, then one that does not fit
    # the kernel (a fourth loop): neither replays
    for trace_json in ([[["NoSuchInstruction", [], [], []]], []],
                       [[["GetBlock", [], ["root", "main"], ["b0"]],
                         ["GetChildBlocks", ["b0"], [], ["b1"]],
                         ["GetLoops", ["b1"], [], ["l2", "l3", "l4", "l5"]]], []]):
        database = MemoryDatabase()
        _record_of(database, task.mod, trace_json)
        with pytest.warns(RuntimeWarning, match=f"the best record does not replay on "
                                                f"{task.task_name}"):
            tuned = apply_database(Layer, database, TARGET)
        kernel = _kernels(tuned)[task.task_name]
        assert kernel.get_attr("op_pattern") != 8  # not swapped in: the build schedules it
        built = DefaultCPUSchedule(info=CPUInfo.from_target(TARGET))(tuned)
        assert _kernels(built)[task.task_name].get_attr("tir.is_scheduled") == "matmul"


def test_one_space_given_to_several_tasks_reads_each_tasks_default_rule():
    space = ms.space_generator.PostOrderApply()
    first = ms.TuneContext(_conv_func(1, 16, 16, 16), target="llvm --num-cores=2",
                           space_generator=space)
    second = ms.TuneContext(MyModule, target="llvm --num-cores=2", space_generator=space)
    assert first.space_generator is space and second.space_generator is not space

    def rule(ctx):
        (postproc,) = [p for p in ctx.space_generator.postprocs
                       if isinstance(p, RewriteParallelVectorizeUnroll)]
        assert postproc.context is ctx
        return postproc.default_rule

    assert (rule(first), rule(second)) == ("conv", "matmul")
