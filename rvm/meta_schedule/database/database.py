"""Database: workloads and their tuning records, with the queries the tuner and the
compile step need. ``MemoryDatabase`` keeps them in memory; ``JSONDatabase``
also appends them to JSON-lines files in a work directory.

Records of one workload may come from different machines; times are only
compared between records of one hardware fingerprint: this machine's when
it has records, else the fingerprint with the most records.
"""
import collections
import threading

from rvm.ir.base import structural_hash
from rvm.meta_schedule.database.workload import Workload, workload_module
from rvm.runtime.compiler import default_compiler
from rvm.support.hardware import hardware_fingerprint

_CURRENT = threading.local()


class Database:
    """Workloads (by structural hash) and their records, in commit order.

    >>> db = MemoryDatabase()
    >>> len(db)
    0
    """

    def __init__(self):
        self._workloads = {}  # shash -> [Workload] (hash collisions are told apart by equality)
        self._records = collections.defaultdict(list)  # id(workload) -> [TuningRecord]

    # ---- workloads
    def _find(self, mod):
        mod = workload_module(mod)
        shash = structural_hash(mod)
        for workload in self._workloads.get(shash, ()):
            if workload.matches(mod):
                return workload, mod
        return None, mod

    def has_workload(self, mod):
        """Whether ``mod`` (a kernel module or PrimFunc) has been committed as a workload."""
        return self._find(mod)[0] is not None

    def commit_workload(self, mod):
        """The Workload of ``mod``, added (and stored) if it is new."""
        workload, mod = self._find(mod)
        if workload is None:
            workload = Workload(mod)
            self._add_workload(workload)
            self._store_workload(workload)
        return workload

    def _add_workload(self, workload):
        self._workloads.setdefault(workload.shash, []).append(workload)

    @property
    def workloads(self):
        """Every workload, in commit order."""
        return [w for ws in self._workloads.values() for w in ws]

    # ---- records
    def commit_tuning_record(self, record):
        """Adds ``record`` (its workload must have been committed)."""
        if not any(w is record.workload for w in self._workloads.get(record.workload.shash, ())):
            raise ValueError("commit_tuning_record: the record's workload is not in this "
                             "database; commit_workload(mod) first")
        self._records[id(record.workload)].append(record)
        self._store_record(record)

    def commit_remeasurement(self, record, run_secs):
        """Adds the times of a second measurement of ``record`` (a record of this
        database) to its ``run_secs``: the record stays one record."""
        if not any(r is record for r in self._records.get(id(record.workload), ())):
            raise ValueError("commit_remeasurement: the record is not in this database")
        record.run_secs = list(record.run_secs or []) + [float(s) for s in run_secs]
        self._store_remeasurement(record)

    def commit_final_comparison(self, workload, final_secs):
        """Records the final comparison of ``workload``: ``final_secs`` maps each finalist
        (a record of this database) to its figure per round. The finalists of an earlier
        comparison of the workload stop being finalists (their rounds were measured at
        other moments, and the new comparison included the best of them)."""
        records = self._records.get(id(workload), ())
        for record in final_secs:
            if not any(r is record for r in records):
                raise ValueError("commit_final_comparison: a finalist is not a record of "
                                 "this workload in this database")
        for record in records:
            secs = next((s for r, s in final_secs.items() if r is record), None)
            secs = None if not secs else [float(s) for s in secs]
            if secs != record.final_secs:
                record.final_secs = secs
                self._store_remeasurement(record)

    def records_of(self, workload):
        """Every record of ``workload`` (valid and failed), in commit order."""
        return list(self._records.get(id(workload), ()))

    def get_all_tuning_records(self):
        """Every record, workload by workload."""
        return [r for w in self.workloads for r in self._records.get(id(w), ())]

    def get_top_k(self, workload, top_k, fingerprint=None):
        """The ``top_k`` fastest valid records of ``workload`` measured on one hardware
        (``fingerprint``, by default this machine's, else the most common one): the
        finalists of its final comparison first, by their median round, then the others
        by their fastest measurement (``TuningRecord.rank_sec``)."""
        valid = [r for r in self.records_of(workload) if r.is_valid]
        if not valid:
            return []
        groups = collections.Counter(r.fingerprint for r in valid)
        if fingerprint is None:
            local = hardware_fingerprint(default_compiler())
            fingerprint = local if local in groups else groups.most_common(1)[0][0]
        same = [r for r in valid if r.fingerprint == fingerprint]
        return sorted(same, key=lambda r: (not r.final_secs, r.rank_sec))[:max(0, int(top_k))]

    def __len__(self):
        return sum(len(rs) for rs in self._records.values())

    # ---- queries
    def query_tuning_record(self, mod, target=None, workload_name=None):
        """The best record of ``mod``'s workload, or None."""
        workload, _ = self._find(mod)
        if workload is None:
            return None
        best = self.get_top_k(workload, 1)
        return best[0] if best else None

    def query_schedule(self, mod, target=None, workload_name=None):
        """A Schedule of ``mod`` with the best record's trace applied, or None."""
        record = self.query_tuning_record(mod, target, workload_name)
        return None if record is None else record.as_schedule()

    def query_ir_module(self, mod, target=None, workload_name=None):
        """The best scheduled module of ``mod``, or None."""
        sch = self.query_schedule(mod, target, workload_name)
        return None if sch is None else sch.mod

    # ---- storage hooks (MemoryDatabase stores nothing)
    def _store_workload(self, workload):
        pass

    def _store_record(self, record):
        pass

    def _store_remeasurement(self, record):
        pass

    # ---- the current database
    def __enter__(self):
        stack = getattr(_CURRENT, "stack", None)
        if stack is None:
            stack = _CURRENT.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _CURRENT.stack.pop()

    @staticmethod
    def current():
        """The database of the innermost ``with database:`` block, or None."""
        stack = getattr(_CURRENT, "stack", None)
        return stack[-1] if stack else None


class MemoryDatabase(Database):
    """A database kept in memory only."""


class PyDatabase(Database):
    """A database written in Python by subclassing (TVM's name for user-defined ones)."""
