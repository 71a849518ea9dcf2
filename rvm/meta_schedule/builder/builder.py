"""The builder interface: candidate modules in, compiled artifacts (or reasons) out.

A builder turns each ``BuilderInput(mod, target)`` into a ``BuilderResult``:
the compiled kernel library (``artifact_path``, with the C ``source`` and the
kernel ``functions`` it exports, so a remote runner can rebuild it) or an
``error_msg`` saying why the candidate could not be built. ``build`` waits for the
results; ``submit`` starts a build and returns a ``BuildFuture``, so the tuner can
search for the next batch while this one compiles (a builder that cannot build in the
background, the base class's default, builds at ``submit``).
"""
from rvm.meta_schedule.future import Future


class BuilderInput:
    """A candidate to build: ``mod`` (an IRModule of one kernel) for ``target``;
    ``layout_free``: the input positions that are constants at every call, whose packing
    the build hoists and the builder therefore splits off (``layout_preproc``);
    ``lowered``, when given, is ``mod`` as measured (that packing split off) already
    lowered, as ``meta_schedule.lowered.lowered_module`` gives it (the builder then
    skips lowering)."""

    def __init__(self, mod, target, params=None, lowered=None, layout_free=()):
        self.mod = mod
        self.target = target
        self.params = params
        self.lowered = lowered
        self.layout_free = [int(k) for k in layout_free or ()]

    def __repr__(self):
        return f"BuilderInput(target={str(self.target)!r})"


class BuilderResult:
    """A built candidate: ``artifact_path`` or ``error_msg`` (exactly one is set);
    ``preprocs``: the ``Preproc`` (``relax.transform.split_layout_rewrite_preproc``) of
    each input "main" takes packed: the runner packs those inputs with it, once, before
    "main" is checked and timed (none: no packing)."""

    def __init__(self, artifact_path=None, error_msg=None, source=None, functions=None,
                 use_openmp=False, preprocs=()):
        if (artifact_path is None) == (error_msg is None):
            raise ValueError("a BuilderResult has either an artifact_path or an error_msg")
        self.artifact_path = artifact_path
        self.error_msg = error_msg
        self.source = source
        self.functions = dict(functions or {})
        self.use_openmp = use_openmp
        self.preprocs = list(preprocs)

    def __repr__(self):
        if self.error_msg is not None:
            return f"BuilderResult(error_msg={self.error_msg[:80]!r})"
        return f"BuilderResult(artifact_path={self.artifact_path!r})"


class BuildFuture(Future):
    """A build under way: ``result()`` waits for it and returns its BuilderResults, in the
    order of the inputs; ``done()`` says whether it has finished."""

    @classmethod
    def of(cls, results):
        """A future that is already done with ``results``."""
        return super().of(list(results))


class Builder:
    """Base class of builders: ``build(builder_inputs) -> [BuilderResult]`` in order, and
    ``submit(builder_inputs) -> BuildFuture`` (by default: built at once)."""

    def build(self, builder_inputs):
        """Builds every input; a failure is a BuilderResult with ``error_msg``, never a raise."""
        raise NotImplementedError

    def submit(self, builder_inputs):
        """Starts building every input: a BuildFuture of what ``build`` returns. This default
        builds before it returns; a builder that compiles in worker processes returns as
        soon as the work is handed to them."""
        return BuildFuture.of(self.build(builder_inputs))

    def close(self):
        """Releases the builder's worker processes (a later build starts them again)."""


class PyBuilder(Builder):
    """A builder written in Python by subclassing (TVM's name for user-defined builders)."""
