"""DefaultCPUSchedule: the pass giving every kernel without a schedule a rule-based one.

Each PrimFunc of the module is offered to the rules in order (``RULES`` of
``rvm.dlight.cpu``: matmul, conv (dense NCHW convolutions, vectorized over output
channels), window (other convolutions, pooling), attention (Q.K^T over a symbolic
sequence), then the generic rule for elementwise chains and reductions); the first rule that returns a schedule
wins, and the function
keeps its attributes and gains ``tir.is_scheduled``. A rule is deterministic:
it reads only the kernel's loop extents and dtypes and a ``CPUInfo`` (vector
width, cores), never a random decision or a measurement. A kernel is left as
it is when it is scheduled already (``tir.is_scheduled``, a loop that is not
serial), when it is opaque to fusion (``op_pattern`` 8: what
MetaScheduleApplyDatabase swaps in from a tuning record, or a hand-written
kernel that opted out), or when no rule applies (a primitive refusing is a
rule not applying, never an error of the build).

Rules run on a traced Schedule (``trace_default_schedule``), their ``prepare``
step included, so the default kernel's trace replays it exactly: the tuner
measures that trace first and keeps it with the other candidates.

>>> from rvm.te.create_prim_func import create_prim_func
>>> from rvm.te.operation import compute, placeholder
>>> A = placeholder((4, 100), name="A")
>>> double = create_prim_func([A, compute((4, 100), lambda i, j: A[i, j] * 2.0)])
>>> schedule_func(double, RULES, CPUInfo(vector_bytes=64, cores=2)).get_attr(SCHEDULED)
'generic'
"""
from rvm.dlight.analysis import shared_inlining
from rvm.dlight.cpu.rules import RULES
from rvm.dlight.target import CPUInfo
from rvm.target.target import Target
from rvm.tir.function import PrimFunc
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.schedule import Schedule
from rvm.tir.stmt import For, ForKind
from rvm.tir.stmt_functor import post_order_visit
from rvm.tir.transform.prim_func_pass import prim_func_pass

SCHEDULED = "tir.is_scheduled"
OPAQUE = 8  # OpPatternKind.OPAQUE


def _has_scheduled_loop(func):
    found = []

    def visit(node):
        if isinstance(node, For) and node.kind != ForKind.SERIAL:
            found.append(node)

    post_order_visit(func.body, visit)
    return bool(found)


def is_scheduled(func):
    """True when ``func`` keeps its own schedule (see the module docstring)."""
    if func.get_attr(SCHEDULED) or func.get_attr("op_pattern") == OPAQUE:
        return True
    return _has_scheduled_loop(func)


def trace_default_schedule(func, rules, info):
    """``(sch, rule name)``: a Schedule of ``func`` (a PrimFunc, or a module whose one
    PrimFunc is "main") on which the first of ``rules`` that applies has run, so that
    ``sch.trace`` replayed on a fresh Schedule of ``func`` gives the default kernel again
    (the tuner's first candidate); None when no rule applies. A rule's ``prepare`` runs
    inside ``sch``, as traced primitives. Each rule starts on a fresh Schedule; the rules
    that begin by inlining the kernel's producers share that work (``shared_inlining``)."""
    with shared_inlining():
        for rule in rules:
            sch = Schedule(func)
            try:
                if not rule.prepare(sch, info) or not rule.apply(sch, info):
                    continue
            except (ScheduleError, ValueError, TypeError):
                continue  # a primitive refusing (TypeError: operands of two index dtypes)
            return sch, rule.name
    return None


def schedule_func(func, rules, info):
    """``func`` scheduled by the first of ``rules`` that applies (the rule's name is kept
    in ``tir.is_scheduled``), or ``func`` itself."""
    if is_scheduled(func):
        return func
    found = trace_default_schedule(func, rules, info)
    if found is None:
        return func
    sch, name = found
    out = sch.mod[sch.func_working_on or "main"]
    return out.with_fields(attrs={**dict(func.attrs), SCHEDULED: name})


def DefaultCPUSchedule(rules=None, info=None):  # noqa: N802  (passes are CamelCase factories)
    """The pass scheduling every PrimFunc without a schedule (module docstring);
    ``rules`` default to ``rvm.dlight.cpu.rules.RULES``, ``info`` to the CPUInfo of the
    current Target (``relax.build`` enters its target), else of the host."""
    rules = tuple(RULES if rules is None else rules)

    def transform(func, mod, ctx):
        if not isinstance(func, PrimFunc):
            return func
        return schedule_func(func, rules, info or CPUInfo.from_target(Target.current()))

    return prim_func_pass(transform, "DefaultCPUSchedule")
