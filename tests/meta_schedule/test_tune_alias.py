"""rvm.tune names rvm.meta_schedule: the same module objects, never copies."""
import importlib

import rvm


def test_tune_is_meta_schedule():
    import rvm.meta_schedule as ms
    import rvm.tune

    assert rvm.tune is ms and rvm.tune is rvm.meta_schedule


def test_submodules_are_shared():
    tune_db = importlib.import_module("rvm.tune.database")
    ms_db = importlib.import_module("rvm.meta_schedule.database")
    assert tune_db is ms_db
    from rvm.tune.database import JSONDatabase
    assert JSONDatabase is ms_db.JSONDatabase
