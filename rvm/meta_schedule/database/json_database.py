"""JSONDatabase: a database kept as two JSON-lines files, appended to as tuning goes.

``database_workload.json`` has one workload per line,
``[structural hash, script text]``; ``database_tuning_record.json`` has one
record per line, ``[workload line number (from 0), record object]``. Lines
are only ever appended, so an interrupted tuning run loses at most the line
it was writing; such a damaged line is skipped with a warning naming it, and
a later run resumes from what the files hold. A record measured again at the
end of a run (``commit_remeasurement``) is appended once more, marked
``"remeasured": true``, and so is one whose ``final_secs`` a final comparison set or
cleared; on loading, it replaces the earlier line of the same candidate.

>>> import tempfile
>>> db = JSONDatabase(work_dir=tempfile.mkdtemp())
>>> len(db), db.path_workload.name
(0, 'database_workload.json')
"""
import json
import os
import pathlib
import warnings

from rvm.meta_schedule.database.database import Database
from rvm.meta_schedule.database.tuning_record import TuningRecord
from rvm.meta_schedule.database.workload import Workload

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


class JSONDatabase(Database):
    """The records of ``work_dir`` (or of the two given paths).

    With ``allow_missing=False`` the files must exist already.
    """

    def __init__(self, path_workload=None, path_tuning_record=None, work_dir=None,
                 allow_missing=True, module_equality="structural"):
        super().__init__()
        if module_equality != "structural":
            raise ValueError(f"module_equality {module_equality!r} is not supported; "
                             "expected 'structural'")
        if work_dir is not None:
            work_dir = pathlib.Path(work_dir)
            path_workload = path_workload or work_dir / WORKLOAD_FILE
            path_tuning_record = path_tuning_record or work_dir / RECORD_FILE
        if path_workload is None or path_tuning_record is None:
            raise ValueError("JSONDatabase needs work_dir, or both path_workload and "
                             "path_tuning_record")
        self.path_workload = pathlib.Path(path_workload)
        self.path_tuning_record = pathlib.Path(path_tuning_record)
        for path in (self.path_workload, self.path_tuning_record):
            if not path.exists():
                if not allow_missing:
                    raise FileNotFoundError(f"JSONDatabase: {path} does not exist "
                                            "(allow_missing=False)")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
        self._order = []  # workloads by line number
        self._load()

    def _lines(self, path):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as err:
                    warnings.warn(f"{path}:{number}: skipping a damaged line ({err})",
                                  RuntimeWarning, stacklevel=3)

    def _load(self):
        for number, data in self._lines(self.path_workload):
            try:
                workload = Workload.from_json(data)
            except Exception as err:
                raise ValueError(f"{self.path_workload}:{number}: not a workload: {err}") from None
            self._order.append(workload)
            self._add_workload(workload)
        for number, data in self._lines(self.path_tuning_record):
            try:
                index, body = data
                workload = self._order[index]
                record = TuningRecord.from_json(body, workload)
            except (ValueError, TypeError, IndexError) as err:
                warnings.warn(f"{self.path_tuning_record}:{number}: skipping a record that "
                              f"cannot be read ({err})", RuntimeWarning, stacklevel=2)
                continue
            if body.get("remeasured"):
                self._replace(workload, record)
            else:
                self._records[id(workload)].append(record)

    def _replace(self, workload, record):
        """A remeasurement line: the record it updates takes its times."""
        for old in self._records.get(id(workload), ()):
            if old.same_candidate(record):
                old.run_secs = record.run_secs
                old.final_secs = record.final_secs
                return
        self._records[id(workload)].append(record)

    @staticmethod
    def _append(path, data):
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(data, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _store_workload(self, workload):
        self._order.append(workload)
        self._append(self.path_workload, workload.as_json())

    def _store_record(self, record, **marks):
        index = next(i for i, w in enumerate(self._order) if w is record.workload)
        self._append(self.path_tuning_record, [index, dict(record.as_json(), **marks)])

    def _store_remeasurement(self, record):
        self._store_record(record, remeasured=True)
