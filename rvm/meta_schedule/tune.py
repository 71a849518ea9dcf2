"""tune_tasks: tunes a list of TuneContexts into a database (TVM's ``ms.tune_tasks``).

The components may be given as objects or by name: ``builder="local"``,
``runner="local"``, ``database="json"`` (a JSONDatabase in ``work_dir``, so
a second run resumes), ``cost_model="gbt"`` (or "random": random search),
``task_scheduler="gradient"`` (or "round-robin").
"""
from rvm.meta_schedule import builder as _builder
from rvm.meta_schedule import cost_model as _cost_model
from rvm.meta_schedule import runner as _runner
from rvm.meta_schedule import task_scheduler as _task_scheduler
from rvm.meta_schedule.database.database import Database
from rvm.meta_schedule.database.json_database import JSONDatabase
from rvm.meta_schedule.tune_log import TuneLog


def _database(database, work_dir):
    if isinstance(database, Database):
        return database
    if database == "json":
        return JSONDatabase(work_dir=work_dir)
    if database == "memory":
        from rvm.meta_schedule.database.database import MemoryDatabase

        return MemoryDatabase()
    raise ValueError(f"unknown database {database!r}; expected 'json', 'memory' or a Database")


def _component(value, factory, base, what):
    if isinstance(value, base):
        return value
    if isinstance(value, str):
        return factory(value)
    raise TypeError(f"{what} must be a name or a {base.__name__}, got {type(value).__name__}")


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
    if measure_callbacks:
        raise ValueError("custom measure_callbacks are not supported; records go to the "
                         "database and the cost model by default")
    max_trials_per_task = max_trials_global if max_trials_per_task is None else \
        int(max_trials_per_task)
    builder = _component(builder, _builder.create, _builder.Builder, "builder")
    runner = _component(runner, _runner.create, _runner.Runner, "runner")
    cost_model = None if cost_model is None else _component(
        cost_model, _cost_model.create, _cost_model.CostModel, "cost_model")
    scheduler = _component(task_scheduler, _task_scheduler.create, _task_scheduler.TaskScheduler,
                           "task_scheduler")
    database = _database(database, work_dir)
    log = TuneLog(work_dir, progress)
    log.info(f"{type(builder).__name__}: max_workers = {getattr(builder, 'max_workers', 1)}")
    log.info(f"{type(runner).__name__}: max_workers = {getattr(runner, 'max_workers', 1)}")
    try:
        scheduler.tune(tasks, list(task_weights), int(max_trials_global), max_trials_per_task,
                       int(num_trials_per_iter), builder, runner, database, cost_model, log)
    finally:
        builder.close()
        runner.close()
        log.close([t.row for t in scheduler.tasks])
    return database
