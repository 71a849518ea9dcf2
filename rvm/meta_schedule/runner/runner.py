"""The runner interface: built candidates in, measured times (or reasons) out.

A runner takes ``RunnerInput``s (a built kernel library, the arguments'
shapes and the unscheduled kernel to check results against) and returns one
``RunnerFuture`` per input; ``future.result()`` is a ``RunnerResult`` with
``run_secs`` (seconds per call, one per repeat) and the ``fingerprint`` of the
hardware that measured them, or ``error_msg`` (a crash, a hang, a wrong
result). The search only sees this interface, so a remote runner (a cluster
of workers) plugs in beside ``LocalRunner``.
"""
from rvm.meta_schedule.future import Future


class EvaluatorConfig:
    """How a candidate is timed: ``repeat`` measurements of ``number`` calls each,
    ``number`` growing until one measurement lasts ``min_repeat_ms``. The candidate's
    record keeps every measurement and is ranked by the fastest. On a machine shared
    with other work the scheduler preempts the measuring process every few milliseconds:
    a measurement that lasts longer than a time slice always includes the waits, so the
    default is many short measurements, some of which run within one slice."""

    def __init__(self, number=3, repeat=10, min_repeat_ms=2, enable_cpu_cache_flush=False):
        if int(number) < 1 or int(repeat) < 1 or float(min_repeat_ms) < 0:
            raise ValueError(f"EvaluatorConfig needs number >= 1, repeat >= 1 and "
                             f"min_repeat_ms >= 0, got {number}, {repeat}, {min_repeat_ms}")
        if enable_cpu_cache_flush:
            raise ValueError("enable_cpu_cache_flush is not supported; expected False")
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = float(min_repeat_ms)
        self.enable_cpu_cache_flush = False

    def as_dict(self):
        return {"number": self.number, "repeat": self.repeat,
                "min_repeat_ms": self.min_repeat_ms}


class RunnerInput:
    """A candidate to measure.

    ``artifact_path`` is the compiled library (with its C ``source`` and the
    ``functions`` it exports, for runners that compile elsewhere), ``func_name``
    the kernel to call, ``args_info`` its arguments (TensorInfos), and
    ``reference`` the BuilderResult of the unscheduled kernel whose outputs
    the candidate must reproduce on the same random inputs (None: no check);
    ``preprocs`` (BuilderResult.preprocs): how the inputs the kernel takes packed are
    packed, once, before the check and the timing.
    """

    def __init__(self, artifact_path, device_type="cpu", args_info=(), func_name="main",
                 functions=None, source=None, use_openmp=False, reference=None, preprocs=()):
        self.artifact_path = artifact_path
        self.device_type = device_type
        self.args_info = list(args_info)
        self.func_name = func_name
        self.functions = dict(functions or {})
        self.source = source
        self.use_openmp = use_openmp
        self.reference = reference
        self.preprocs = list(preprocs)

    @classmethod
    def from_builder_result(cls, result, args_info, func_name="main", reference=None):
        """The input measuring a successful BuilderResult."""
        return cls(result.artifact_path, "cpu", args_info, func_name, result.functions,
                   result.source, result.use_openmp, reference, result.preprocs)

    def __repr__(self):
        return f"RunnerInput({self.artifact_path!r}, func_name={self.func_name!r})"


class RunnerResult:
    """A measurement: ``run_secs`` (seconds per call) and ``fingerprint``, or ``error_msg``."""

    def __init__(self, run_secs=None, error_msg=None, fingerprint=None):
        if (run_secs is None) == (error_msg is None):
            raise ValueError("a RunnerResult has either run_secs or an error_msg")
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.error_msg = error_msg
        self.fingerprint = fingerprint

    def __repr__(self):
        if self.error_msg is not None:
            return f"RunnerResult(error_msg={self.error_msg[:80]!r})"
        return f"RunnerResult(run_secs={self.run_secs})"


class RunnerFuture(Future):
    """A measurement under way: ``done()`` and ``result()`` (a RunnerResult)."""


class Runner:
    """Base class of runners: ``run(runner_inputs) -> [RunnerFuture]`` in order."""

    def run(self, runner_inputs):
        """Starts measuring every input; failures come back as results, never as raises."""
        raise NotImplementedError

    def close(self):
        """Releases the runner's worker processes (a later run starts them again)."""


class PyRunner(Runner):
    """A runner written in Python by subclassing (TVM's name for user-defined runners)."""
