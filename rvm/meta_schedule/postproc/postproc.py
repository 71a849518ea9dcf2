"""Postprocessors: run on every candidate after its trace, before it is built.

``apply(sch) -> bool``: rewrites ``sch`` (recorded in its trace after the
EnterPostproc mark) and says whether the candidate is valid.
"""


class Postproc:
    """Base class of postprocessors."""

    def initialize_with_tune_context(self, context):
        """Binds the postprocessor to a tune context (its target)."""
        self.context = context

    def apply(self, sch):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class PyPostproc(Postproc):
    """A postprocessor written in Python by subclassing."""
