"""A space whose candidates crash, hang or compute wrong results: each is recorded failed
with its reason, and the tuner still returns a correct best schedule."""
import numpy as np
import pytest

import rvm
from rvm import meta_schedule as ms
from rvm.meta_schedule.runner import EvaluatorConfig, LocalRunner
from rvm.tir.schedule.schedule import Schedule
from tests.meta_schedule import kernels


def broken_or_fine(sch):
    """Draws one of four kernels: the workload itself, or one that writes out of bounds (at
    a huge index: the kernel's bounds check refuses it), hangs or computes B = A + 1."""
    choice = sch.get(sch.sample_categorical([0, 1, 2, 3], [0.25] * 4))
    if choice == 0:
        return sch
    return Schedule([kernels.Crash, kernels.Hang, kernels.Wrong][choice - 1])


@pytest.mark.slow
def test_failed_candidates_are_recorded_and_the_best_is_correct(tmp_path):
    runner = LocalRunner(timeout_sec=3, evaluator_config=EvaluatorConfig(1, 1, 0))
    database = ms.tune_tir(mod=kernels.Copy, target="c", max_trials_global=4,
                           num_trials_per_iter=4, space=broken_or_fine, strategy="replay-func",
                           work_dir=str(tmp_path), runner=runner, seed=3)
    records = database.get_all_tuning_records()
    reasons = sorted(r.error_msg or "ok" for r in records)
    assert len(records) == 4, reasons
    # The out-of-bounds write is stopped by the kernel's bounds check.
    assert reasons[0].startswith("IndexError: main: an index of buffer 'B' is out of bounds")
    assert reasons[1] == "ok"
    assert reasons[2] == "timed out after 3 s"
    assert reasons[3].startswith("wrong result: argument 1 (float32[16]) differs")
    sch = ms.tir_integration.compile_tir(database, kernels.Copy, "c")
    a = np.arange(16, dtype="float32")
    b = rvm.nd.empty((16,), "float32")
    rvm.build(sch.mod, target="c")["main"](rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a)
    log = (tmp_path / "logs" / "tune.log").read_text()
    assert "candidate failed: timed out after 3 s" in log
