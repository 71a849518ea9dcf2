"""TuningRecord: one measured candidate of a workload.

A record holds the candidate's ``trace`` (how to schedule the workload into
it), the ``workload``, the measured ``run_secs`` (None for a failed
candidate, whose ``error_msg`` says why), the ``target``, the ``args_info``,
the ``fingerprint`` of the hardware that measured it and ``candidate_hash``,
the structural hash of the scheduled module, by which a resumed search
knows what it has already measured. ``final_secs`` is set on the finalists of a
workload's final comparison (the tuner's last step: its best candidates and the
default kernel measured again in alternating rounds, one figure per round); the
database ranks the finalists first, by their median round (``rank_sec``).

The trace is kept in its JSON form and becomes a ``Trace`` on demand, by
replaying it on a fresh Schedule of the workload (so records load without
the schedule machinery until one is used).
"""
import math
import statistics

from rvm.meta_schedule.arg_info import ArgInfo
from rvm.tir.schedule.schedule import Schedule
from rvm.tir.schedule.trace import Trace

# The run time TVM records for a candidate that failed.
MAX_MEAN_TIME = 1e10


class TuningRecord:
    """A measured (or failed) candidate of ``workload``."""

    def __init__(self, trace, workload, run_secs=None, target=None, args_info=None,
                 fingerprint=None, error_msg=None, candidate_hash=None, final_secs=None):
        self._trace = trace if hasattr(trace, "as_json") else None
        self.trace_json = trace.as_json() if hasattr(trace, "as_json") else trace
        self.workload = workload
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.target = None if target is None else str(target)
        self.args_info = list(args_info) if args_info is not None else None
        self.fingerprint = fingerprint
        self.error_msg = error_msg
        self.candidate_hash = None if candidate_hash is None else int(candidate_hash)
        self.final_secs = None if not final_secs else [float(s) for s in final_secs]

    @property
    def is_valid(self):
        """Whether the candidate ran (finite times below TVM's failure mark)."""
        return bool(self.run_secs) and all(math.isfinite(s) and s < MAX_MEAN_TIME
                                           for s in self.run_secs)

    @property
    def mean_run_sec(self):
        """Mean seconds per call (MAX_MEAN_TIME for a failed candidate)."""
        if not self.is_valid:
            return MAX_MEAN_TIME
        return sum(self.run_secs) / len(self.run_secs)

    @property
    def best_run_sec(self):
        """The fastest of the measured seconds per call (MAX_MEAN_TIME for a failed
        candidate): what records are ranked by. A busy moment of the machine only ever
        slows a measurement, so the fastest of several is the steadiest estimate of the
        kernel's own time, where a mean carries any spike along."""
        if not self.is_valid:
            return MAX_MEAN_TIME
        return min(self.run_secs)

    @property
    def rank_sec(self):
        """What the database ranks the record by: its median round of the final
        comparison when it was a finalist (a lucky round of a noisy kernel does not crown
        it), else its fastest measurement."""
        if self.final_secs and self.is_valid:
            return statistics.median(self.final_secs)
        return self.best_run_sec

    def same_candidate(self, other):
        """Whether ``other`` records the same candidate (by hash, else by trace)."""
        if self.candidate_hash is not None and other.candidate_hash is not None:
            return self.candidate_hash == other.candidate_hash
        return self.trace_json == other.trace_json

    @property
    def trace(self):
        """The candidate's Trace (replayed from JSON on the workload the first time)."""
        if self._trace is None:
            self._trace = self.as_schedule().trace
        return self._trace

    def as_schedule(self):
        """A fresh Schedule of the workload with this record's trace applied."""
        sch = Schedule(self.workload.mod)
        Trace.apply_json_to_schedule(self.trace_json, sch)
        return sch

    def as_json(self):
        """The record as a JSON object (the workload is referred to, not included)."""
        return {
            "trace": self.trace_json,
            "run_secs": self.run_secs,
            "target": self.target,
            "args_info": None if self.args_info is None else [a.as_json() for a in self.args_info],
            "fingerprint": self.fingerprint,
            "error_msg": self.error_msg,
            "candidate_hash": None if self.candidate_hash is None else str(self.candidate_hash),
            "final_secs": self.final_secs,
        }

    @staticmethod
    def from_json(data, workload):
        """The record written by ``as_json``, for ``workload``."""
        if not isinstance(data, dict) or "trace" not in data:
            raise ValueError(f"a tuning record is a JSON object with a 'trace', got "
                             f"{str(data)[:80]}")
        args_info = data.get("args_info")
        return TuningRecord(
            data["trace"], workload, data.get("run_secs"), data.get("target"),
            None if args_info is None else [ArgInfo.from_json(a) for a in args_info],
            data.get("fingerprint"), data.get("error_msg"), data.get("candidate_hash"),
            data.get("final_secs"))

    def __repr__(self):
        outcome = (f"best {self.best_run_sec * 1e6:.2f} us, mean {self.mean_run_sec * 1e6:.2f} us"
                   if self.is_valid else f"failed: {str(self.error_msg)[:60]}")
        return f"TuningRecord({self.workload!r}, {outcome})"
