"""ScheduleError: a schedule primitive was used in a way that would change what the program
computes, or on something it cannot transform; the message names the rule that was broken."""
from rvm.support.errors import RVMError


class ScheduleError(RVMError):
    """A schedule primitive refused its arguments.

    ``primitive`` is the primitive's name, ``rule`` the rule the use breaks
    (one sentence), ``where`` what it was applied to (a block or loop) and
    ``detail`` facts found (e.g. the loop's extent).

    >>> print(ScheduleError("split", "the factors' product must cover the loop extent",
    ...                     "loop j", "factors [4, 8] give 32 < 128"))
    split on loop j: the factors' product must cover the loop extent (factors [4, 8] give 32 < 128)
    """

    def __init__(self, primitive, rule, where="", detail="", render_level="detail"):
        self.primitive = primitive
        self.rule = rule
        self.where = where
        self.detail = detail
        head = f"{primitive} on {where}" if where else primitive
        text = f"{head}: {rule}"
        if detail and render_level == "detail":
            text += f" ({detail})"
        super().__init__(text)
