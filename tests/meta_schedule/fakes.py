"""Stand-ins for the builder and the runner, so tests of the tuner's decisions compile
nothing and choose every measured time."""
from rvm.ir.base import structural_hash
from rvm.meta_schedule.builder import BuilderResult, PyBuilder
from rvm.meta_schedule.runner import Runner, RunnerFuture, RunnerResult


class NoCompiler(PyBuilder):
    """Every candidate "builds"; its ``source`` is the structural hash of its module, which
    names the kernel for the runners below (nothing is compiled: they never load it)."""

    def build(self, builder_inputs):
        return [BuilderResult(artifact_path="unused", source=str(structural_hash(b.mod)))
                for b in builder_inputs]


class TimesRunner(Runner):
    """Measurement ``n`` (counting from 0) takes ``secs(n, index, seen)`` seconds per
    repeat (a list): ``index`` is the order in which its kernel was first measured (the
    search measures the default kernel first, then the unscheduled one), ``seen`` how many
    times that kernel was measured before. ``calls`` lists the sources in measuring
    order."""

    def __init__(self, secs):
        self.secs = secs
        self.calls = []
        self.order = {}

    def run(self, runner_inputs):
        out = []
        for runner_input in runner_inputs:
            source = runner_input.source
            index = self.order.setdefault(source, len(self.order))
            secs = self.secs(len(self.calls), index, self.calls.count(source))
            self.calls.append(source)
            out.append(RunnerFuture.of(RunnerResult(list(secs), fingerprint="fp")))
        return out
