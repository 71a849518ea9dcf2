"""Seed 004 §5.3 as written: tune_tir with a ScheduleFn space and with the default space,
then compile_tir, in a work_dir; tiny budgets."""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from tests.meta_schedule.workloads import MyModule, matmul_inputs, stochastic_schedule_mm

pytestmark = pytest.mark.slow

TARGET = "llvm --num-cores=1"
FAST = EvaluatorConfig(number=2, repeat=1, min_repeat_ms=0)


def _check(sch):
    a, b = matmul_inputs()
    lib = rvm.build(sch.mod, target="c")
    c = rvm.nd.empty((128, 128), "float32")
    lib["main"](rvm.nd.array(a), rvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-3)


def test_tune_tir_with_a_schedule_fn_space(tmp_path):
    database = ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=4,
                           num_trials_per_iter=2,
                           space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                           work_dir=str(tmp_path), task_name="main",
                           runner=LocalRunner(evaluator_config=FAST))
    assert len(database) == 4
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    text = str(sch.trace)
    assert "sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[" in text
    assert "sch.reorder(l1, l6, l3, l7)" in text
    _check(sch)
    assert (tmp_path / "logs" / "tune.log").read_text().count("Sending 2 sample(s) to builder") \
        == 2
    lines = (tmp_path / "database_tuning_record.json").read_text().splitlines()
    assert len([line for line in lines if '"remeasured":true' not in line]) == 4


def test_tune_tir_with_the_default_space(tmp_path):
    database = ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=4,
                           num_trials_per_iter=4, work_dir=str(tmp_path), task_name="main",
                           runner=LocalRunner(evaluator_config=FAST), seed=1,
                           strategy=ms.search_strategy.EvolutionarySearch(population_size=12))
    records = database.get_all_tuning_records()
    assert len(records) == 4 and any(r.is_valid for r in records)
    # The default space measures the unscheduled kernel too (an empty trace).
    assert [r.trace_json for r in records].count([[], []]) == 1
    sch = ms.tir_integration.compile_tir(database, MyModule, TARGET)
    _check(sch)


def test_compile_tir_in_a_fresh_database_from_the_work_dir(tmp_path):
    ms.tune_tir(mod=MyModule, target=TARGET, max_trials_global=2, num_trials_per_iter=2,
                space=stochastic_schedule_mm, work_dir=str(tmp_path),
                runner=LocalRunner(evaluator_config=FAST))
    fresh = ms.database.JSONDatabase(work_dir=str(tmp_path))
    sch = ms.tir_integration.compile_tir(fresh, MyModule, TARGET)
    _check(sch)
    assert "decompose_reduction" in str(sch.trace)


def test_compile_tir_without_records_warns_and_returns_none(tmp_path):
    database = ms.database.JSONDatabase(work_dir=str(tmp_path))
    with pytest.warns(RuntimeWarning, match="no successful tuning record"):
        assert ms.tir_integration.compile_tir(database, MyModule, TARGET) is None


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="cannot tune for target python"):
        ms.tune_tir(MyModule, "python", str(tmp_path), 4)
    with pytest.raises(ValueError, match="unknown target"):
        ms.tune_tir(MyModule, "cuda -arch=sm_80", str(tmp_path), 4)
    with pytest.raises(TypeError, match="IRModule or a PrimFunc"):
        ms.tune_tir("main", TARGET, str(tmp_path), 4)
    with pytest.raises(ValueError, match="unknown space"):
        ms.tune_tir(MyModule, TARGET, str(tmp_path), 4, space="nonsense")
