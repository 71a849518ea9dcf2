"""The child process of a fuzz campaign: makes inputs, runs them, counts where each stopped.

Before each input it writes the input (``<state>.input``) and a progress record
(``<state>.progress``: inputs started, the CLOCK_MONOTONIC start of the running input and
the CPU time the child had used by then, stage counts, the most CPU and wall time one
input has taken) that the parent's watchdog reads, so an input running over the deadline
is a hang even when it is the child's first. Internal errors and engine mismatches are
saved (the first input of each kind, with the traceback) and listed in
``<state>.findings.json``.

Test hook: ``--inject KIND@N`` (set by the parent from ``RVM_FUZZ_INJECT``, for its first
child only) makes input number N (from 0) crash with SIGSEGV (``segv``), hang asleep
(``hang``) or busy (``spin``), raise a non-documented exception from the loader or parser (``internal``), or
call a kernel writing out of bounds (``asan``, reported under ``--asan``).
"""
import ast
import ctypes
import json
import os
import random
import signal
import struct
import time
import typing

from fuzz.stages import STAGES, InternalError, check_run_error, load_stage

PROGRESS = struct.Struct("<QQQ" + "Q" * len(STAGES) + "QQ")
ENGINES = ("native", "python")
# What a user gives the VM for an untrusted model (README, Limits): a runaway kernel loop
# stops at its next poll, at step_limit or within time_limit seconds, far below the
# campaign's hang deadline.
VM_LIMITS = {"memory_limit": 256 << 20, "step_limit": 10 ** 6, "time_limit": 1.0}
# time_limit counts wall-clock seconds, so on a loaded machine one engine may reach it and
# the other not: such an input runs again on both engines with this many times the limit,
# and counts as ``timing`` (not an engine mismatch) when the engines then agree.
TIMING_RETRY = 10
# The compiler of a mutant's kernels stops after this many seconds of CPU time and of wall
# time (rvm's defaults, 60 and 120, are meant for real models; a seed compiles in well under
# a second at -O1): a source made huge by DAG sharing (a 500 KB expression takes gcc ~30 s)
# is then counted at the ``compile_limit`` stage instead of passing the hang deadline. The
# compile and the two runs' time_limit take at most ~7 s; what rvm spends generating the C
# comes on top (~4 s for 2 MB of C, near the decoder's expanded-size cap), and can still
# pass the 10 s deadline.
COMPILE_SECONDS = {"cpu_seconds": 4, "seconds": 5}


def campaign_limits():
    """Sets the process's compiler limits to the campaign's (``COMPILE_SECONDS``)."""
    from rvm.runtime.compiler import default_compiler
    limits = default_compiler().limits
    limits.cpu_seconds, limits.seconds = COMPILE_SECONDS["cpu_seconds"], COMPILE_SECONDS["seconds"]


def read_progress(path):
    """A child's progress record (``Progress``; all zero when there is none yet)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(PROGRESS.size)
        values = PROGRESS.unpack(raw)
    except (OSError, struct.error):
        return Progress(0, 0, 0, {}, 0, 0)
    stages = dict(zip(STAGES, values[3:3 + len(STAGES)]))
    return Progress(values[0], values[1], values[2], stages, *values[3 + len(STAGES):])


class Progress(typing.NamedTuple):
    """What a child reports: inputs started; the CLOCK_MONOTONIC start (ns) of the running
    input and the child's CPU time (ns, its reaped subprocesses included) at that start,
    both 0 between inputs; stage counts; the most CPU and wall time (ns) an input took."""
    started: int
    start_ns: int
    start_cpu_ns: int
    counts: dict
    max_cpu_ns: int
    max_wall_ns: int


def cpu_ns():
    """CPU time this process and its reaped subprocesses (compilers) have used, in ns."""
    t = os.times()
    return int((t.user + t.system + t.children_user + t.children_system) * 1e9)


class _Recorder:
    """Counts per stage, the progress record, and the saved findings of one child."""

    def __init__(self, state, seed):
        self.state, self.seed = state, seed
        self.counts = dict.fromkeys(STAGES, 0)
        self.started = 0
        self.max_cpu_ns = self.max_wall_ns = 0
        self.findings = {}
        self.fd = os.open(f"{state}.progress", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.input_fd = os.open(f"{state}.input", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._write(0, 0)

    def _write(self, start_ns, start_cpu_ns):
        values = [self.counts[s] for s in STAGES]
        os.pwrite(self.fd, PROGRESS.pack(self.started, start_ns, start_cpu_ns, *values,
                                         self.max_cpu_ns, self.max_wall_ns), 0)

    def begin(self, data):
        os.pwrite(self.input_fd, data, 0)
        os.ftruncate(self.input_fd, len(data))
        self.started += 1
        self.began = time.monotonic_ns(), cpu_ns()
        self._write(*self.began)

    def restart(self):
        """Starts the running input's clocks for the parent's deadlines again (a deliberate
        re-run of it); its own time, for the slowest input, still counts from its start."""
        self._write(time.monotonic_ns(), cpu_ns())

    def end(self, stages):
        for stage in stages:
            self.counts[stage] += 1
        self.max_wall_ns = max(self.max_wall_ns, time.monotonic_ns() - self.began[0])
        self.max_cpu_ns = max(self.max_cpu_ns, cpu_ns() - self.began[1])
        self._write(0, 0)

    def finding(self, kind, key, data, text):
        entry = self.findings.get(key)
        if entry is None:  # keep the first input of each kind, with its traceback
            name = f"{kind}-{self.seed}-{self.started - 1}"
            directory = os.path.dirname(self.state)
            with open(os.path.join(directory, name + ".input"), "wb") as f:
                f.write(data)
            with open(os.path.join(directory, name + ".txt"), "w") as f:
                f.write(text)
            entry = self.findings[key] = {"kind": kind, "count": 0,
                                          "input": os.path.join(directory, name + ".input"),
                                          "traceback": text[-1500:]}
        entry["count"] += 1
        with open(f"{self.state}.findings.tmp", "w") as f:
            json.dump(self.findings, f)
        os.replace(f"{self.state}.findings.tmp", f"{self.state}.findings.json")


def _run_engines(ex, calls, limits):
    """{engine: outcome} of ``calls(ex)`` run on each engine under ``limits``: "ran", the
    name of the documented error a run stopped with, or "link: <error>"."""
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine
    outcomes = {}
    for engine in ENGINES:
        try:
            vm = VirtualMachine(ex, cpu(), engine=engine, **limits)
        except Exception as err:
            check_run_error(err, f"link ({engine})")
            outcomes[engine] = f"link: {type(err).__name__}"
            continue
        outcome = "ran"
        for name, args in calls(ex):
            try:
                vm[name](*args)
            except Exception as err:
                check_run_error(err, f"run ({engine})")
                outcome = type(err).__name__
        outcomes[engine] = outcome
    return outcomes


def _describe(outcomes):
    return ", ".join(f"{e}: {o}" for e, o in outcomes.items())


class LoaderTarget:
    """Loads executable bytes and runs their functions on both engines with VM limits.

    ``on_retry`` is called before an input runs again because only one engine reached the
    time limit (the child restarts the input's clocks there: the re-run is a new run)."""

    def __init__(self, on_retry=None):
        from rvm.bytecode.executable import Executable
        self.load = Executable.from_bytes
        self.on_retry = on_retry

    def execute(self, data, calls):
        try:
            ex = self.load(data, "fuzz")
        except Exception as err:  # which stage refused it, or an internal error
            return [load_stage(err)], None
        outcomes = _run_engines(ex, calls, VM_LIMITS)
        stages = ["loaded"] + ["refused_at_link" if o.startswith("link: ") else
                               "ran" if o == "ran" else "ran_with_error"
                               for o in outcomes.values()]
        if len(set(outcomes.values())) == 1:
            return stages, None
        if list(outcomes.values()).count("TimeoutError") == 1:  # one engine only: timing?
            if self.on_retry is not None:
                self.on_retry()
            limit = VM_LIMITS["time_limit"] * TIMING_RETRY
            again = _run_engines(ex, calls, {**VM_LIMITS, "time_limit": limit})
            if len(set(again.values())) == 1:
                return stages + ["timing"], None
            stages.append("engine_mismatch")
            return stages, f"{_describe(outcomes)}; again with time_limit {limit:g} s: " \
                           f"{_describe(again)}"
        stages.append("engine_mismatch")
        return stages, _describe(outcomes)


class ParserTarget:
    """Python's syntax check, then rvm's parser."""

    def __init__(self):
        from rvm.script import from_source
        self.load = from_source
        self.check = ast.parse

    def execute(self, data, calls):
        from rvm.support.errors import DiagnosticError
        text = data.decode()
        try:
            self.check(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ["python_syntax_error"], None
        try:
            self.load(text)
        except DiagnosticError:
            return ["rejected_by_parser"], None
        except Exception as err:  # anything but a ParseError / DiagnosticError
            raise InternalError(err, "parse") from None
        return ["parsed"], None


def _inputs(kind, rng):
    """A generator of (input bytes, calls(ex) -> [(function, args)]) for ``kind``."""
    import numpy as np
    from fuzz import mutators
    if kind == "loader":
        from fuzz.fuzz_loader import loader_seeds
        seeds, x = loader_seeds(), np.arange(8, dtype="float32")
        while True:
            base, args = rng.choice(seeds)
            mutate = mutators.mutate_bytes if rng.random() < 0.5 else mutators.mutate_structure

            def calls(ex, args=args):
                return [(name, args.get(name, [x] * ex.function_info(name).num_args))
                        for name in ex.vm_function_names()[:2]]
            yield mutate(rng, base), calls
    elif kind == "parser":
        from fuzz.fuzz_loader import PARSER_SEEDS
        while True:
            seed = rng.choice(PARSER_SEEDS)
            text = None
            if rng.random() < 0.5:
                try:
                    text = mutators.mutate_tree(rng, seed)
                except Exception:  # a tree ast.unparse cannot print: mutate the text instead
                    text = None
            yield (text or mutators.mutate_text(rng, seed)).encode("utf-8", "replace"), None
    else:
        yield from _tir_inputs(rng)


def _tir_inputs(rng):
    import rvm.relax  # noqa: F401  (registers the VM builtins call_packed may name)
    import rvm.vm.machine  # noqa: F401
    from fuzz.tir_graph import TIRGraph
    from fuzz.tir_mutate import mutate
    from fuzz.tir_seeds import tir_seeds
    from rvm.runtime.packed_func import list_global_func_names
    from rvm.tir.serialize import save_prim_funcs
    from tests.security.attack import kernel_tir, with_kernels
    seeds = [(data, save_prim_funcs(kernel_tir(data)), inputs)
             for _, data, inputs in tir_seeds()]
    names = sorted(list_global_func_names())
    while True:
        data, tir, inputs = rng.choice(seeds)
        graph = TIRGraph(tir)
        mutate(rng, graph, names)
        try:
            tir_bytes = graph.to_bytes()
        except OverflowError:  # an integer no msgpack file can hold: not a possible input
            continue
        yield with_kernels(data, tir=tir_bytes), lambda ex, a=inputs: [("main", a)]


def _injected(what):
    if what == "segv":
        ctypes.string_at(0)
    elif what == "hang":  # asleep: only the wall-clock deadline sees it
        while True:
            time.sleep(1)
    elif what == "spin":  # busy: the CPU-time deadline sees it
        while True:
            pass
    elif what == "asan":
        from fuzz.asan import inject_oob_write
        inject_oob_write()


def _raise_injected(*args, **kwargs):
    raise KeyError("injected internal error (test hook)")


def child(kind, seed, state, inject=""):
    """Runs inputs of ``kind`` from ``seed`` until SIGTERM; see the module docstring."""
    import warnings
    from fuzz.asan import started_under_asan
    started_under_asan()
    campaign_limits()
    warnings.filterwarnings("ignore")  # mutated sources make Python warn about literals
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rng = random.Random(seed)
    recorder = _Recorder(state, seed)
    target = LoaderTarget(recorder.restart) if kind in ("loader", "tir") else ParserTarget()
    honest_load = target.load
    what, _, at = inject.partition("@")
    inputs = _inputs(kind, rng)
    while not stop:
        data, calls = next(inputs)
        recorder.begin(data)
        if what and recorder.started - 1 == int(at):
            if what == "internal":  # raised where the loader / parser runs
                target.load = _raise_injected
                target.check = len
            _injected(what)
        try:
            stages, mismatch = target.execute(data, calls)
            if mismatch:
                recorder.finding("mismatch", mismatch, data, mismatch)
        except InternalError as err:
            stages = ["internal_errors"]
            recorder.finding("internal", err.key(), data, err.traceback())
        target.load = honest_load
        target.check = ast.parse
        recorder.end(stages)
    return 0

