"""AddToDatabase: every measured candidate becomes a record in the run's database."""
from rvm.meta_schedule.database.tuning_record import TuningRecord
from rvm.meta_schedule.measure_callback.measure_callback import MeasureCallback
from rvm.runtime.compiler import default_compiler
from rvm.support.hardware import hardware_fingerprint


class AddToDatabase(MeasureCallback):
    """Commits a TuningRecord per candidate, failures with their reason (measured on this
    machine unless the runner's result names another fingerprint)."""

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
              runner_results):
        context = task_scheduler.tasks[task_id].context
        local = hardware_fingerprint(default_compiler())
        for candidate, result in zip(measure_candidates, runner_results):
            task_scheduler.database.commit_tuning_record(TuningRecord(
                candidate.sch.trace, context.search_strategy.workload, result.run_secs,
                context.target, candidate.args_info, result.fingerprint or local,
                result.error_msg, candidate.candidate_hash))
