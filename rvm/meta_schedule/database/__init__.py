"""rvm.meta_schedule.database: workloads and tuning records (TVM's ``ms.database``).

This package is a facade; the definitions live in its modules.
"""
from rvm.meta_schedule.database.database import Database, MemoryDatabase, PyDatabase
from rvm.meta_schedule.database.json_database import JSONDatabase
from rvm.meta_schedule.database.tuning_record import TuningRecord
from rvm.meta_schedule.database.workload import Workload, workload_module


def create(kind="json", *args, **kwargs):
    """A database by kind: "json" (JSONDatabase), "memory" (MemoryDatabase), or a Database
    as it is."""
    if isinstance(kind, Database):
        return kind
    if kind == "json":
        return JSONDatabase(*args, **kwargs)
    if kind == "memory":
        return MemoryDatabase(*args, **kwargs)
    raise ValueError(f"unknown database kind {kind!r}; expected 'json', 'memory' or a Database")


__all__ = ["Database", "JSONDatabase", "MemoryDatabase", "PyDatabase", "TuningRecord",
           "Workload", "create", "workload_module"]
