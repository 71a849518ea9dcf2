"""tune_tasks: tunes a list of TuneContexts into a database (TVM's ``ms.tune_tasks``).

The components may be given as objects or by name: ``builder="local"``,
``runner="local"``, ``database="json"`` (a JSONDatabase in ``work_dir``, so
a second run resumes), ``cost_model="gbt"`` (or "random": random search),
``task_scheduler="gradient"`` (or "round-robin"), ``measure_callbacks=None``
(AddToDatabase, then UpdateCostModel).
"""
from rvm.meta_schedule.builder import create as create_builder
from rvm.meta_schedule.cost_model import create as create_cost_model
from rvm.meta_schedule.database import create as create_database
from rvm.meta_schedule.measure_callback import create as create_measure_callback
from rvm.meta_schedule.runner import create as create_runner
from rvm.meta_schedule.task_scheduler import create as create_task_scheduler
from rvm.meta_schedule.tune_log import TuneLog


def tune_tasks(*, tasks, task_weights, work_dir, max_trials_global, max_trials_per_task=None,
               num_trials_per_iter=64, builder="local", runner="local", database="json",
               cost_model="gbt", measure_callbacks=None, task_scheduler="gradient",
               module_equality="structural", progress=None):
    """Tunes ``tasks`` (TuneContexts, weighted by ``task_weights``) for at most
    ``max_trials_global`` trials in all (``max_trials_per_task`` each); returns the
    database. ``progress``: None (a bar when stderr is a terminal), True or False."""
    if len(tasks) != len(task_weights):
        raise ValueError(f"tune_tasks: {len(tasks)} tasks but {len(task_weights)} weights")
    if int(max_trials_global) < 0:
        raise ValueError(f"max_trials_global must be >= 0, got {max_trials_global}")
    if module_equality != "structural":
        raise ValueError(f"module_equality {module_equality!r} is not supported; expected "
                         "'structural'")
    max_trials_per_task = max_trials_global if max_trials_per_task is None else \
        int(max_trials_per_task)
    builder = create_builder(builder)
    runner = create_runner(runner)
    cost_model = None if cost_model is None else create_cost_model(cost_model)
    scheduler = create_task_scheduler(task_scheduler)
    measure_callbacks = create_measure_callback(measure_callbacks)
    if database == "json":
        database = create_database("json", work_dir=work_dir)  # a second run resumes
    database = create_database(database)
    log = TuneLog(work_dir, progress)
    log.info(f"{type(builder).__name__}: max_workers = {getattr(builder, 'max_workers', 1)}")
    log.info(f"{type(runner).__name__}: max_workers = {getattr(runner, 'max_workers', 1)}")
    try:
        scheduler.tune(tasks, list(task_weights), int(max_trials_global), max_trials_per_task,
                       int(num_trials_per_iter), builder, runner, database, cost_model, log,
                       measure_callbacks)
    finally:
        builder.close()
        runner.close()
        log.close([t.row for t in scheduler.tasks])
    return database
