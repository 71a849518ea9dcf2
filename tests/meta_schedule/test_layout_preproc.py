"""Tuning times a kernel as the build runs it: a constant input's packing done once, not
inside every measured call (meta_schedule.layout_preproc, the builder and the runner)."""
import numpy as np
import pytest

from rvm import meta_schedule as ms
from rvm import relax
from rvm.ir.base import structural_hash
from rvm.dlight.cpu.pack import LAYOUT_REWRITE
from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.builder import BuilderInput, BuilderResult, LocalBuilder, PyBuilder
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.extracted_task import extract_tasks
from rvm.meta_schedule.layout_preproc import PREPROC, measured_module
from rvm.meta_schedule.runner.evaluate import evaluate
from rvm.meta_schedule.runner.local_runner import runner_spec
from rvm.meta_schedule.runner import Runner
from rvm.meta_schedule.runner.runner import (EvaluatorConfig, RunnerFuture, RunnerInput,
                                             RunnerResult)
from rvm.meta_schedule.search_strategy.search_strategy import candidate_hash
from rvm.meta_schedule.task_scheduler import RoundRobin
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.stmt import Block
from rvm.tir.stmt_functor import post_order_visit


def _matmul_model(weight_const=True):
    bb = relax.BlockBuilder()
    x = Var("x", TensorStructInfo((16, 32), "float32"))
    w = Var("w", TensorStructInfo((32, 128), "float32"))
    params = [x] if weight_const else [x, w]
    weight = relax.const(np.ones((32, 128), "float32")) if weight_const else w
    with bb.function("main", params):
        out = bb.emit(relax.op.matmul(x, weight))
        _ = bb.emit_func_output(out)
    return bb.get()


def _packing_blocks(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block)
                     and n.annotations.get(LAYOUT_REWRITE) else None)
    return found


@pytest.fixture(scope="module")
def task():
    (task,) = extract_tasks(_matmul_model(), "c")
    return task


@pytest.fixture(scope="module")
def builder():
    b = LocalBuilder(max_workers=1)
    yield b
    b.close()


def test_a_bound_weight_is_a_layout_free_input_of_its_task(task):
    assert task.layout_free == [1]
    (free,) = extract_tasks(_matmul_model(weight_const=False), "c")
    assert free.layout_free == []


def test_the_default_kernel_is_split_into_packing_and_compute(task):
    sch = default_schedule(task.mod, task.target, task.layout_free)
    func = sch.mod["main"]
    assert _packing_blocks(func), "the default matmul packs its weight into panels"
    split, packs = measured_module(func, task.layout_free)
    assert packs == [(1, [4, 32, 32], "float32")]
    assert not _packing_blocks(split["main"]), "the timed kernel does no packing"
    assert _packing_blocks(split[PREPROC])
    assert measured_module(func, []) == (None, [])  # activations are packed per call
    assert func.get_attr("layout_free_buffers") is None, "the workload itself is unmarked"


def _spec(built, task, reference):
    args_info = ArgInfo.from_prim_func(task.mod["main"])
    runner_input = RunnerInput.from_builder_result(built, args_info, "main", reference)
    return runner_spec(runner_input, EvaluatorConfig(number=1, repeat=2, min_repeat_ms=0), 0)


def test_the_runner_packs_once_and_checks_the_compute_kernel(task, builder):
    sch = default_schedule(task.mod, task.target, task.layout_free)
    reference, split, whole = builder.build([
        BuilderInput(task.mod, task.target),
        BuilderInput(sch.mod, task.target, layout_free=task.layout_free),
        BuilderInput(sch.mod, task.target)])
    assert split.packs == [(1, [4, 32, 32], "float32")] and whole.packs == []
    assert set(split.functions) == {"main", PREPROC}
    assert len(evaluate(_spec(split, task, reference))["run_secs"]) == 2
    assert len(evaluate(_spec(whole, task, reference))["run_secs"]) == 2
    # Attack: the compute kernel timed without its packing step gets the unpacked weight,
    # which it refuses by name rather than reading it as panels.
    spec = _spec(split, task, reference)
    spec["packs"] = []
    with pytest.raises(ValueError, match=r"B_global' expects float32\[4, 32, 32\]"):
        evaluate(spec)


class _SplittingNoCompiler(PyBuilder):
    """NoCompiler that splits as LocalBuilder does: ``packs`` says what the runner packs."""

    def build(self, builder_inputs):
        return [BuilderResult(artifact_path="unused", source=str(structural_hash(b.mod)),
                              packs=measured_module(b.mod["main"], b.layout_free)[1])
                for b in builder_inputs]


class _PackAwareRunner(Runner):
    """Times without running: the default schedule (measured first) computes in 1 ms and
    packs its weight in 1 ms more when the packing is timed with it (no ``packs``); the
    unscheduled kernel takes 5 ms, every other candidate 1.5 ms."""

    def __init__(self):
        self.order = {}
        self.seen = []  # (measuring index, packs) per measurement

    def run(self, runner_inputs):
        out = []
        for r in runner_inputs:
            index = self.order.setdefault(r.source, len(self.order))
            self.seen.append((index, r.packs))
            if index == 0:
                secs = 1e-3 if r.packs else 2e-3
            else:
                secs = 5e-3 if index == 1 else 1.5e-3
            out.append(RunnerFuture.of(RunnerResult([secs] * 3, fingerprint="fp")))
        return out


def test_the_default_kernel_is_kept_when_its_compute_is_fastest(tmp_path, task):
    """Timed with its packing (as tuning did before), the default would lose to any
    candidate; timed as the build runs it, it is chosen."""
    runner = _PackAwareRunner()
    database = ms.relax_integration.tune_relax(
        _matmul_model(), {}, "c", str(tmp_path), max_trials_global=4, num_trials_per_iter=4,
        builder=_SplittingNoCompiler(), runner=runner, cost_model="random", seed=0,
        strategy="replay-trace", progress=False,
        task_scheduler=RoundRobin(remeasure_top_k=2, stop_after_trials=0))
    assert (0, [(1, [4, 32, 32], "float32")]) in runner.seen
    assert len(runner.order) > 2, "other candidates were measured too"
    workload = database.commit_workload(task.mod)
    (best,) = database.get_top_k(workload, 1)
    assert best.candidate_hash == candidate_hash(
        default_schedule(task.mod, task.target, task.layout_free))
