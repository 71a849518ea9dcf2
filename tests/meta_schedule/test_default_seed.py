"""The search starts from the default schedule: its trace replays into exactly the kernel
DefaultCPUSchedule makes (the matmul rule's row partition and column padding, the generic
rule's vector partition included), it is the first
candidate measured and stays in the database, and a tuned build whose default kernel
measured fastest uses the default kernel."""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from rvm.dlight import CPUInfo, DefaultCPUSchedule, RULES, schedule_func
from rvm.dlight.base import trace_default_schedule
from rvm.ir.base import assert_structural_equal, structural_equal
from rvm.meta_schedule.apply_database import apply_database
from rvm.meta_schedule.default_schedule import default_schedule
from rvm.meta_schedule.extracted_task import prepare_for_tuning
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.meta_schedule.runner.runner import RunnerFuture, RunnerResult
from rvm.meta_schedule.search_strategy.search_strategy import candidate_hash
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741
from rvm.tir.schedule.schedule import Schedule
from rvm.tir.schedule.trace import trace_from_json
from tests.dlight.test_attention import _pv
from tests.dlight.test_pad_columns import narrow
from tests.dlight.test_row_tiles import dense_relu
from tests.dlight.test_softmax_partition import softmax
from tests.meta_schedule.workloads import MyModule

INFO = CPUInfo(vector_bytes=32, cores=2)
INFO16 = CPUInfo(vector_bytes=64, cores=2)  # 16 float lanes: a 10-wide matmul is padded
FAST = EvaluatorConfig(number=1, repeat=1, min_repeat_ms=0)
TARGET = "llvm --num-cores=1"


@T.prim_func
def scale(A: T.Buffer((37, 129), "float32"), B: T.Buffer((37, 129), "float32")):
    for i, j in T.grid(37, 129):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def narrow_rows(x: T.handle, w: T.handle, z: T.handle):
    # a 10-wide layer over a symbolic batch: padded, then partitioned past the padded copy
    T.func_attr({"layout_free_buffers": [1]})
    n = T.int64()
    X = T.match_buffer(x, (n, T.int64(32)), "float32")
    W = T.match_buffer(w, (T.int64(32), T.int64(10)), "float32")
    Z = T.match_buffer(z, (n, T.int64(10)), "float32")
    Y = T.alloc_buffer((n, T.int64(10)), "float32")
    for i, j, k in T.grid(n, T.int64(10), T.int64(32)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(n, T.int64(10)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = T.max(Y[vi, vj], T.float32(0))


# (func, info, the prepare steps its trace holds)
REPLAYED = {
    "static-matmul": (MyModule["main"], INFO, []),
    "symbolic-rows": (dense_relu, INFO, ["PartitionRows"]),
    "elementwise": (scale, INFO, []),
    "padded-10-wide": (narrow, INFO16, ["PadColumns"]),
    "padded-symbolic-rows": (narrow_rows, INFO16, ["PadColumns", "PartitionRows"]),
    "attention-pv": (_pv(16), INFO16, ["PartitionRows"]),
    "softmax": (softmax, INFO16, ["PartitionInnermost", "PartitionInnermost"]),  # exp, divide
}


@pytest.mark.parametrize("case", list(REPLAYED))
def test_replaying_the_default_trace_gives_the_default_kernel(case):
    func, info, steps = REPLAYED[case]
    sch, name = trace_default_schedule(func, RULES, info)
    default = schedule_func(func, RULES, info)
    assert default.get_attr("tir.is_scheduled") == name
    kinds = [inst.kind.name for inst in sch.trace.insts]
    assert [k for k in kinds if k.startswith(("Partition", "Pad"))] == steps
    if case == "padded-symbolic-rows":
        assert "sch.partition_rows(depth=0, rows=8, keep=1)" in str(sch.trace)
    # the trace, through its JSON form (as a tuning record keeps it), on a fresh schedule
    fresh = Schedule(func)
    trace_from_json(sch.trace.as_json()).apply_to_schedule(fresh)
    assert_structural_equal(fresh.mod["main"].body, default.body)
    assert fresh.mod["main"].params == default.params


def test_the_column_padding_is_a_step_of_the_trace():
    sch, name = trace_default_schedule(narrow, RULES, INFO16)
    assert name == "matmul"
    assert "sch.pad_columns(block=b" in str(sch.trace) and \
        "read_buffer_index=1, width=16)" in str(sch.trace)
    default = schedule_func(narrow, RULES, INFO16).script()
    assert "W_pad" in default and "Y_real" in default
    # without it, the rest of the trace does not apply to the function
    cut = [inst for inst in sch.trace.insts if inst.kind.name != "PadColumns"]
    with pytest.raises((ValueError, rvm.tir.schedule.ScheduleError)):
        type(sch.trace)(cut, sch.trace.decisions).apply_to_schedule(Schedule(narrow))


def test_pad_columns_refuses_what_it_cannot_pad():
    sch = Schedule(narrow)
    block = sch.get_block("Y")
    with pytest.raises(ValueError, match="pad_columns expects read_buffer_index >= 0, "
                                         "width >= 1"):
        sch.pad_columns(block, -1, 16)
    with pytest.raises(rvm.tir.schedule.ScheduleError,
                       match="indexed by the column axis and a reduction axis"):
        sch.pad_columns(block, 0, 16)  # X: indexed by the rows, not the columns
    with pytest.raises(rvm.tir.schedule.ScheduleError, match=r"columns \(10\) must be fewer"):
        sch.pad_columns(block, 1, 8)
    with pytest.raises(rvm.tir.schedule.ScheduleError, match="reads 2 buffers, not 3"):
        sch.pad_columns(block, 2, 16)
    # Z is a function output, not an intermediate the copy of the real columns could write
    with pytest.raises(rvm.tir.schedule.ScheduleError, match="must write one buffer the function allocates"):
        sch.pad_columns(sch.get_block("Z"), 0, 16)
    assert [i.kind.name for i in sch.trace.insts] == ["GetBlock", "GetBlock"]


def test_partition_innermost_refuses_a_constant_or_missing_nest():
    sch = Schedule(MyModule)
    with pytest.raises(ValueError, match="partition_innermost expects nest >= 0, width >= 1"):
        sch.partition_innermost(0, 0)
    for nest in (0, 5):  # a constant innermost extent; no such nest
        with pytest.raises(rvm.tir.schedule.ScheduleError, match=f"nest {nest} must exist"):
            sch.partition_innermost(nest, 16)
    assert sch.trace.insts == []


def test_the_row_partition_is_a_step_of_the_trace():
    sch, _ = trace_default_schedule(dense_relu, RULES, INFO)
    text = str(sch.trace)
    assert "sch.partition_rows(depth=0, rows=" in text
    # without it, the rest of the trace does not apply to the function
    cut = [inst for inst in sch.trace.insts if inst.kind.name != "PartitionRows"]
    with pytest.raises(ValueError):
        type(sch.trace)(cut, sch.trace.decisions).apply_to_schedule(Schedule(dense_relu))


def test_partition_rows_refuses_a_loop_it_cannot_partition():
    sch = Schedule(MyModule)
    with pytest.raises(ValueError, match="partition_rows expects depth >= 0, rows >= 1, keep >= 0"):
        sch.partition_rows(0, 0)
    # the rows of MyModule are a constant 128, not a symbolic count
    with pytest.raises(rvm.tir.schedule.ScheduleError,
                       match="loop at depth 3 over one extent"):
        sch.partition_rows(3, 4)
    assert sch.trace.insts == []


class _DefaultFastest(LocalRunner):
    """A LocalRunner that reports every candidate of a task but its first (the default
    schedule) 1000 times slower than measured."""

    def __init__(self):
        super().__init__(evaluator_config=FAST)
        self.defaults = {}  # id(reference) -> artifact of the first candidate

    def run(self, runner_inputs):
        futures = super().run(runner_inputs)
        slow = []
        for runner_input, future in zip(runner_inputs, futures):
            first = self.defaults.setdefault(id(runner_input.reference),
                                             runner_input.artifact_path)
            slow.append(first != runner_input.artifact_path)

        def result(future, slower):
            r = future.result()
            if r.error_msg is None and slower:
                return RunnerResult([s * 1000 for s in r.run_secs], fingerprint=r.fingerprint)
            return r

        return [RunnerFuture(f.done, lambda f=f, s=s: result(f, s))
                for f, s in zip(futures, slow)]


@I.ir_module
class Small:
    @R.function
    def main(x: R.Tensor((4, 32), "float32"), w: R.Tensor((32, 24), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.matmul(x, w))
            z = R.multiply(y, y)
            R.output(z)
        return z


def _default_kernels(mod):
    built = DefaultCPUSchedule(info=CPUInfo.from_target(TARGET))(
        prepare_for_tuning(mod))
    return {gv.name_hint: f for gv, f in built.functions.items()
            if isinstance(f, rvm.tir.PrimFunc)}


@pytest.mark.slow
def test_a_tuned_build_uses_the_default_kernel_when_it_measured_fastest(tmp_path):
    work_dir = str(tmp_path)
    database = ms.relax_integration.tune_relax(
        Small, {}, TARGET, work_dir, max_trials_global=4, num_trials_per_iter=2,
        runner=_DefaultFastest(), cost_model="random", seed=0, progress=False,
        task_scheduler=ms.task_scheduler.GradientBased(remeasure_top_k=2, remeasure_rounds=1))
    tasks = ms.relax_integration.extract_tasks(Small, TARGET)
    defaults = _default_kernels(Small)
    tuned = apply_database(Small, database, TARGET)
    for task in tasks:
        workload = database.commit_workload(task.mod)
        records = database.records_of(workload)
        first = records[0]
        expected = default_schedule(task.mod, TARGET)
        # the first record is the default schedule's trace, and it measured fastest
        assert first.candidate_hash == candidate_hash(
            expected)
        best = database.get_top_k(workload, 1)[0]
        assert best is first and all(r.best_run_sec >= first.best_run_sec
                                     for r in records if r.is_valid)
        name = task.task_name
        assert_structural_equal(tuned[name].with_fields(attrs={}),
                                defaults[name].with_fields(attrs={}))
    x = np.random.default_rng(0).standard_normal((4, 32)).astype("float32")
    w = np.random.default_rng(1).standard_normal((32, 24)).astype("float32")
    out = relax.VirtualMachine(relax.build(tuned, target="c"), rvm.cpu())["main"](x, w)
    y = np.maximum(x @ w, 0)
    np.testing.assert_allclose(out.numpy(), y * y, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_the_best_record_is_never_slower_than_the_default_one(tmp_path):
    database = ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=4,
                           num_trials_per_iter=2, work_dir=str(tmp_path), seed=2,
                           runner=LocalRunner(evaluator_config=FAST), cost_model="random")
    workload = database.commit_workload(MyModule)
    records = database.records_of(workload)
    default = default_schedule(MyModule, TARGET)
    hashes = [r.candidate_hash for r in records]
    assert hashes[0] == candidate_hash(default)
    best = database.get_top_k(workload, 1)[0]
    assert best.best_run_sec <= records[0].best_run_sec
    compiled = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    assert structural_equal(compiled.mod, best.as_schedule().mod)
