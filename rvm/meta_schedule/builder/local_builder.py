"""LocalBuilder: candidates lowered to C here, compiled by worker processes with a time limit.

Lowering and C rendering run in the tuning process (they are deterministic
and quick); the C compiler runs in a worker of a WorkerPool, so a compile
that exceeds ``timeout_sec`` is killed and the candidate recorded as failed.
``submit`` returns once the sources are rendered and handed to the workers, so the
tuner searches for its next batch while they compile (``build`` waits).
The sources of a batch go to the workers heaviest first (by their unrolling, which is
what makes a compile slow: ``compile_weight``), so a straggler starts at once and the
other workers compile the rest beside it, instead of it starting last and running alone.
Compiled objects land in the shared kernel cache, so a source compiles once: candidates
of a batch that render to the same C share one job, and a source the cache holds
already (a task's unscheduled baseline is its reference kernel, say) is a lookup in
the worker. A candidate that packs an input the build
packs once (``BuilderInput.layout_free``) is built split, as the build runs it
(``layout_preproc``).
"""
import concurrent.futures
import os
import re

from rvm.codegen.c.target import kernel_source
from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.builder.builder import Builder, BuilderResult, BuildFuture
from rvm.meta_schedule.layout_preproc import measured_module
from rvm.meta_schedule.tune_target import tune_target
from rvm.runtime.compile_job import compile_source
from rvm.runtime.compiler import Compiler, default_compiler
from rvm.runtime.kernel_library import kernel_symbol
from rvm.support.worker_pool import WorkerPool
from rvm.tir.transform.pipeline import lower_module

_MAX_ERROR_CHARS = 4000
_UNROLL = re.compile(r"#pragma GCC unroll (\d+)")


def compile_weight(source):
    """How slow ``source`` is to compile, roughly: the unroll factors of its loops, summed
    (the candidates that run into the compile time limit unroll 32 or 64 times, or nest many
    unrolled loops)."""
    return sum(int(n) for n in _UNROLL.findall(source))


def _takes_packed(func, preprocs):
    """Whether the lowered ``func`` takes each input of ``preprocs`` in its packed shape
    (and every other input as the workload has it): it is the compute kernel."""
    for pre in preprocs:
        if pre.position >= len(func.params):
            return False
        buffer = func.buffer_map.get(func.params[pre.position])
        if buffer is None or buffer.name != pre.packed.name \
                or [int(d) for d in buffer.shape] != [int(d) for d in pre.packed.shape]:
            return False
    return True


def _short(text):
    text = str(text)
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + " ..."


class LocalBuilder(Builder):
    """Builds candidates on this machine.

    ``max_workers`` compiler processes run at once (default: the core count);
    a compile taking more than ``timeout_sec`` seconds fails the candidate. The default,
    10 s, is several times what a good kernel takes even on a loaded machine: what runs
    past it is a sampled schedule that unrolls far too much code (every such candidate
    held a worker for the whole limit, 30 s before, a minute's wall of a model's tune).
    ``cc`` overrides the C compiler command.
    """

    def __init__(self, max_workers=None, timeout_sec=10.0, cc=None):
        self.max_workers = int(max_workers or os.cpu_count() or 1)
        self.timeout_sec = float(timeout_sec)
        self.cc = cc
        self._pool = None
        self._compiler_of_cc = None
        self._executor = concurrent.futures.ThreadPoolExecutor(1)

    @property
    def _compiler(self):
        if not self.cc:
            return default_compiler()
        if self._compiler_of_cc is None:
            self._compiler_of_cc = Compiler(self.cc)
        return self._compiler_of_cc

    def _render(self, builder_input):
        tune_target(builder_input.target)  # a CPU target, or ValueError saying why not
        split, preprocs = measured_module(entry_prim_func(builder_input.mod),
                                          builder_input.layout_free)
        lowered = builder_input.lowered
        if lowered is None or not _takes_packed(entry_prim_func(lowered), preprocs):
            lowered = lower_module(builder_input.mod if split is None else split)
        return (*kernel_source(lowered, self._compiler), preprocs)

    def build(self, builder_inputs):
        return self.submit(builder_inputs).result()

    def submit(self, builder_inputs):
        """Renders every input here, then hands the sources to the compile workers and
        returns: a BuildFuture of the BuilderResults."""
        rendered = []
        for builder_input in builder_inputs:
            try:
                rendered.append(self._render(builder_input))
            except Exception as err:  # a candidate the lowering or codegen rejects
                rendered.append(f"lowering failed: {type(err).__name__}: {_short(err)}")
        paths = {}  # (source, use_openmp) -> artifact path (a str) or a failed JobResult
        jobs = []
        for r in rendered:
            if isinstance(r, tuple) and (r[0], r[2]) not in paths:
                paths[(r[0], r[2])] = None
                jobs.append((r[0], r[2], self.cc))
        jobs.sort(key=lambda job: -compile_weight(job[0]))  # (stable: ties keep their order)
        if self._pool is None:
            self._pool = WorkerPool(self.max_workers)
        compiling = self._executor.submit(self._pool.map, compile_source, jobs,
                                          self.timeout_sec) if jobs else None

        def results():
            for (source, use_openmp, _), outcome in zip(jobs, compiling.result() if jobs
                                                          else ()):
                paths[(source, use_openmp)] = outcome.value if outcome.ok else outcome
            return [self._result(r, paths) for r in rendered]

        return BuildFuture(lambda: compiling is None or compiling.done(), results)

    @staticmethod
    def _result(rendered, paths):
        if not isinstance(rendered, tuple):
            return BuilderResult(error_msg=rendered)
        source, names, use_openmp, preprocs = rendered
        outcome = paths[(source, use_openmp)]
        if not isinstance(outcome, str):
            return BuilderResult(error_msg=f"build failed: {_short(outcome.error)}")
        return BuilderResult(outcome, source=source,
                             functions={n: kernel_symbol(n) for n in names},
                             use_openmp=use_openmp, preprocs=preprocs)

    def close(self):
        if self._pool is not None:
            self._pool.close()
            self._pool = None
