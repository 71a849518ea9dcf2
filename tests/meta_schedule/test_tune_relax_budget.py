"""A whole model's budget: structurally equal kernels are one task, trials go by each
task's share of the model's time (measured on its default kernel), and records are
reused across batch sizes where a kernel's shapes match."""
import pytest

from rvm import meta_schedule as ms
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.meta_schedule.task_scheduler import RoundRobin
from rvm.meta_schedule.task_scheduler.allocation import allocate
from rvm.script import ir as I, relax as R  # noqa: E741
from tests.meta_schedule.test_relax_integration import Twice

TARGET = "llvm --num-cores=1"
FAST = EvaluatorConfig(number=1, repeat=1, min_repeat_ms=0)


def _tune(mod, work_dir, total, per_task=None):
    return ms.relax_integration.tune_relax(
        mod, {}, TARGET, str(work_dir), max_trials_global=total,
        max_trials_per_task=per_task, num_trials_per_iter=4,
        runner=LocalRunner(evaluator_config=FAST), cost_model="random", seed=0,
        task_scheduler=RoundRobin(remeasure_top_k=0),
        progress=False)


def _records(database, task):
    return database.records_of(database.commit_workload(task.mod))


def test_allocate_splits_by_share_under_the_caps():
    assert allocate([3.0, 1.0, 0.0], [100, 100, 100], 8) == [6, 2, 0]
    # a capped task's trials go to the others, in proportion again
    assert allocate([6.0, 3.0, 1.0], [2, 100, 100], 10) == [2, 6, 2]
    assert allocate([1.0, 1.0, 1.0], [5, 5, 5], 100) == [5, 5, 5]
    assert allocate([1.0, 1.0, 1.0], [5, 5, 5], 4) == [2, 1, 1]
    assert allocate([2.0, 1.0], [5, 5], -3) == [0, 0]
    # nothing measured: every task alike
    assert allocate([None, None], [10, 10], 6) == [3, 3]
    assert allocate([None, 2.0], [10, 10], 6) == [0, 6]
    with pytest.raises(ValueError, match="2 shares but 1 caps"):
        allocate([1.0, 2.0], [3], 5)
    with pytest.raises(ValueError, match="shares must be >= 0"):
        allocate([1.0, -2.0], [3, 3], 5)


@I.ir_module
class HeavyAndLight:
    """A 64x128x128 matmul next to an add of four numbers: two tasks, one of which is
    nearly all of the model's time."""

    @R.function
    def main(x: R.Tensor((64, 128), "float32"), w: R.Tensor((128, 128), "float32"),
             v: R.Tensor((4,), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(v, v)
            out = (y, z)
            R.output(out)
        return out


@pytest.mark.slow
def test_trials_go_to_the_task_the_model_spends_its_time_in(tmp_path):
    tasks = ms.relax_integration.extract_tasks(HeavyAndLight, TARGET)
    assert [t.task_name for t in tasks] == ["matmul", "add"]
    database = _tune(HeavyAndLight, tmp_path, total=6)
    heavy, light = (_records(database, t) for t in tasks)
    # each task measured its baselines (default schedule, unscheduled kernel; the add's
    # may be one and the same), then every trial left went to the matmul
    assert 1 <= len(light) <= 2
    assert len(heavy) == 6 - len(light)
    log = (tmp_path / "logs" / "tune.log").read_text()
    assert "\"add\": 0 more trial(s) for its share of the model's time" in log


@pytest.mark.slow
def test_equal_kernels_are_tuned_once(tmp_path):
    database = _tune(Twice, tmp_path, total=3)
    assert len(database.workloads) == 1  # add_one and add_one_again, called three times
    assert len(database.get_all_tuning_records()) >= 2  # its default and unscheduled kernels


def _two_kernels(batch):
    """x @ w over ``batch`` rows next to a @ b, whose shapes do not depend on the batch."""
    from rvm.script import from_source

    return from_source(f"""
@I.ir_module
class Model:
    @R.function
    def main(x: R.Tensor(({batch}, 32), "float32"), w: R.Tensor((32, 32), "float32"),
             a: R.Tensor((24, 24), "float32"), b: R.Tensor((24, 24), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            c = R.matmul(a, b)
            out = (y, c)
            R.output(out)
        return out
""")


@pytest.mark.slow
def test_records_are_reused_across_batch_sizes_where_shapes_match(tmp_path):
    first = _two_kernels(2)
    _tune(first, tmp_path, total=6, per_task=3)
    second = _two_kernels(3)
    database = _tune(second, tmp_path, total=6, per_task=3)
    old_x, shared = ms.relax_integration.extract_tasks(first, TARGET)
    new_x, shared_again = ms.relax_integration.extract_tasks(second, TARGET)
    assert len(database.workloads) == 3  # x @ w at batch 2 and 3, a @ b once
    # a @ b kept its three records of the first run: no trial spent on it again
    assert len(_records(database, shared_again)) == 3
    assert len(_records(database, old_x)) == 3 and len(_records(database, new_x)) == 3
    log = (tmp_path / "logs" / "tune.log").read_text()
    assert log.count("\"matmul1\": 0 more trial(s)") == 1
