"""A result under way, read through two callables: what the builder's and the runner's
futures (``BuildFuture``, ``RunnerFuture``) share."""


class Future:
    """``done()`` says whether the work has finished (``f_done``); ``result()`` waits for
    it and returns its value (``f_result``)."""

    def __init__(self, f_done, f_result):
        self._f_done = f_done
        self._f_result = f_result

    def done(self):
        return self._f_done()

    def result(self):
        return self._f_result()

    @classmethod
    def of(cls, value):
        """A future that is already done with ``value``."""
        return cls(lambda: True, lambda: value)
