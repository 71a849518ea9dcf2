"""Tuning times a kernel as the build runs it: a constant input's packing done once, not
inside every measured call (meta_schedule.layout_preproc, the builder and the runner)."""
import pickle

import numpy as np
import pytest

from rvm import meta_schedule as ms
from rvm import relax
from rvm.ir.base import structural_hash
from rvm.ir.module import IRModule
from rvm.dlight.cpu.pack import LAYOUT_REWRITE
from rvm.meta_schedule.arg_info import ArgInfo
from rvm.meta_schedule.builder import BuilderInput, BuilderResult, LocalBuilder, PyBuilder
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.extracted_task import extract_tasks
from rvm.distributed.ray_runner import MeasureWorker, measure_job
from rvm.meta_schedule.builder import local_builder
from rvm.meta_schedule.layout_preproc import measured_module
from rvm.meta_schedule.lowered import lowered_module
from rvm.meta_schedule.runner.evaluate import evaluate, pack_inputs
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
from rvm.tir.transform.pipeline import lower_module


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
    split, preprocs = measured_module(func, task.layout_free)
    assert [(p.position, [int(d) for d in p.packed.shape]) for p in preprocs] == \
        [(1, [4, 32, 32])]
    assert list(split.functions) and [gv.name_hint for gv in split.functions] == ["main"]
    assert not _packing_blocks(split["main"]), "the timed kernel does no packing"
    assert split["main"].get_attr("layout_free_buffers") is None
    assert measured_module(func, task.layout_free)[0] is split, "split once per kernel"
    assert measured_module(func, []) == (None, [])  # activations are packed per call
    assert func.get_attr("layout_free_buffers") is None, "the workload itself is unmarked"


def test_the_runner_packs_with_the_builds_preproc(task):
    """The packed copy the runner times with is the one the build makes of a bound weight:
    the same ``Preproc.apply``, on the numpy input."""
    sch = default_schedule(task.mod, task.target, task.layout_free)
    (pre,) = measured_module(sch.mod["main"], task.layout_free)[1]
    weight = np.arange(32 * 128, dtype="float32").reshape(32, 128)
    spec = {"preprocs": [pre], "seed": 0, "args_info": []}
    packed = pack_inputs(spec, [np.zeros((16, 32), "float32"), weight])[1]
    np.testing.assert_array_equal(packed, pre.apply(weight))
    np.testing.assert_array_equal(packed[1, 3], weight[3, 32:64])  # panels of 32 columns
    # The same inputs (seed, shapes) and layout: packed once per worker.
    assert pack_inputs(spec, [np.zeros((16, 32), "float32"), weight])[1] is packed
    other = pack_inputs(dict(spec, seed=1), [np.zeros((16, 32), "float32"), weight + 1])[1]
    np.testing.assert_array_equal(other, pre.apply(weight + 1))


def _spec(built, task, reference):
    args_info = ArgInfo.from_prim_func(task.mod["main"])
    runner_input = RunnerInput.from_builder_result(built, args_info, "main", reference)
    return runner_spec(runner_input, EvaluatorConfig(number=1, repeat=2, min_repeat_ms=0), 0)


def test_only_the_compute_kernel_is_compiled_and_timed(task, builder):
    sch = default_schedule(task.mod, task.target, task.layout_free)
    reference, split, whole = builder.build([
        BuilderInput(task.mod, task.target),
        BuilderInput(sch.mod, task.target, layout_free=task.layout_free),
        BuilderInput(sch.mod, task.target)])
    assert [p.position for p in split.preprocs] == [1] and whole.preprocs == []
    assert set(split.functions) == {"main"}, "no packing kernel is compiled"
    assert "layout_rewrite" not in split.source and "B_global[" in split.source
    assert len(evaluate(_spec(split, task, reference))["run_secs"]) == 2
    assert len(evaluate(_spec(whole, task, reference))["run_secs"]) == 2
    # Attack: the compute kernel timed without its packing step gets the unpacked weight,
    # which it refuses by name rather than reading it as panels.
    spec = _spec(split, task, reference)
    spec["preprocs"] = []
    with pytest.raises(ValueError, match=r"B_global' expects float32\[4, 32, 32\]"):
        evaluate(spec)


def test_the_builder_lowers_a_candidate_once(task, builder, monkeypatch):
    """The module the cost model's features were read from is the one compiled: the split
    candidate is lowered once, not again by the builder; a ``lowered`` module that is not
    the compute kernel (the whole kernel, lowered) is not compiled as if it were."""
    sch = default_schedule(task.mod, task.target, task.layout_free)
    lowered = lowered_module(sch, task.layout_free)
    func = lowered["main"]
    assert [int(d) for d in func.buffer_map[func.params[1]].shape] == [4, 32, 32]
    calls = []
    monkeypatch.setattr(local_builder, "lower_module",
                        lambda mod: calls.append(mod) or lower_module(mod))
    (built,) = builder.build([BuilderInput(sch.mod, task.target, lowered=lowered,
                                           layout_free=task.layout_free)])
    assert built.error_msg is None and calls == []
    (again,) = builder.build([BuilderInput(sch.mod, task.target, lowered=lowered_module(sch),
                                           layout_free=task.layout_free)])
    assert len(calls) == 1 and again.source == built.source


def test_the_job_a_worker_gets_carries_the_preproc(task, builder):
    """The spec (LocalRunner) and the job (RayRunner) pickle with the Preproc in them, and
    a worker measures the unpickled job with the inputs packed."""
    sch = default_schedule(task.mod, task.target, task.layout_free)
    reference, split = builder.build([
        BuilderInput(task.mod, task.target),
        BuilderInput(sch.mod, task.target, layout_free=task.layout_free)])
    args_info = ArgInfo.from_prim_func(task.mod["main"])
    runner_input = RunnerInput.from_builder_result(split, args_info, "main", reference)
    config = EvaluatorConfig(number=1, repeat=2, min_repeat_ms=0)
    job = pickle.loads(pickle.dumps(measure_job(runner_input, config, 0)))
    (pre,) = job["spec"]["preprocs"]
    weight = np.random.default_rng(0).random((32, 128), dtype="float32")
    np.testing.assert_array_equal(pre.apply(weight), split.preprocs[0].apply(weight))
    worker = MeasureWorker()
    try:
        assert len(worker.measure(job, 60, 60)["run_secs"]) == 2
        job["spec"]["preprocs"] = []
        assert "B_global' expects float32[4, 32, 32]" in worker.measure(job, 60, 60)["error"]
    finally:
        worker.pool.close()


class _SplittingNoCompiler(PyBuilder):
    """NoCompiler that splits as LocalBuilder does: ``preprocs`` say what the runner packs."""

    def build(self, builder_inputs):
        return [BuilderResult(artifact_path="unused", source=str(structural_hash(b.mod)),
                              preprocs=measured_module(b.mod["main"], b.layout_free)[1])
                for b in builder_inputs]


class _PackAwareRunner(Runner):
    """Times without running: the default schedule (measured first) computes in 1 ms and
    packs its weight in 1 ms more when the packing is timed with it (no ``preprocs``); the
    unscheduled kernel takes 5 ms, every other candidate 1.5 ms."""

    def __init__(self):
        self.order = {}
        self.seen = []  # (measuring index, packed positions) per measurement

    def run(self, runner_inputs):
        out = []
        for r in runner_inputs:
            index = self.order.setdefault(r.source, len(self.order))
            self.seen.append((index, [p.position for p in r.preprocs]))
            if index == 0:
                secs = 1e-3 if r.preprocs else 2e-3
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
    assert (0, [1]) in runner.seen
    assert len(runner.order) > 2, "other candidates were measured too"
    workload = database.commit_workload(task.mod)
    (best,) = database.get_top_k(workload, 1)
    assert best.candidate_hash == candidate_hash(
        default_schedule(task.mod, task.target, task.layout_free))


def _tune_tir(tmp_path, func):
    runner = _PackAwareRunner()
    database = ms.tune_tir(
        mod=IRModule({"main": func}), target="c", work_dir=str(tmp_path), max_trials_global=4,
        num_trials_per_iter=4, builder=_SplittingNoCompiler(), runner=runner,
        cost_model="random", seed=0, strategy="replay-trace", progress=False,
        task_scheduler=RoundRobin(remeasure_top_k=2, stop_after_trials=0))
    return database, runner


def test_tune_tir_takes_the_constant_inputs_from_layout_free_buffers(tmp_path, task):
    """A kernel given to tune_tir with ``layout_free_buffers`` (TVM's attribute) is tuned as
    the build runs it: its default seed packs the weight, is timed without the packing and
    kept; the record's workload is the kernel without the attribute."""
    marked = task.mod["main"].with_attr("layout_free_buffers", [1])
    database, runner = _tune_tir(tmp_path, marked)
    assert (0, [1]) in runner.seen and len(runner.order) > 2
    default = default_schedule(task.mod, task.target, [1])
    for mod in (IRModule({"main": marked}), task.mod):
        best = ms.tir_integration.compile_tir(database, mod, "c")
        assert candidate_hash(best) == candidate_hash(default)
        assert _packing_blocks(best.mod["main"])
        assert best.mod["main"].get_attr("layout_free_buffers") is None


def test_tune_tir_without_the_attribute_times_the_packing(tmp_path, task):
    """Unmarked, nothing is known constant: no candidate is timed with packed inputs."""
    _, runner = _tune_tir(tmp_path, task.mod["main"])
    assert runner.seen and all(packed == [] for _, packed in runner.seen)


@pytest.mark.parametrize("value, message", [
    ([5], r"positions \[5\], but the kernel has 3 parameters"),
    (["w"], r"must list parameter positions \(integers\), got \['w'\]"),
])
def test_tune_tir_refuses_a_bad_layout_free_buffers(tmp_path, task, value, message):
    with pytest.raises(ValueError, match=message):
        _tune_tir(tmp_path, task.mod["main"].with_attr("layout_free_buffers", value))
