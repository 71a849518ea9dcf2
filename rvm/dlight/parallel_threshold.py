"""The work from which a kernel's default rule runs it on threads, for the tuner.

Each default rule threads a kernel's outer loop once its nest does enough work to pay for
threads, from a threshold of its own class of kernels (``analysis.py`` says why each is
where it is): a register-tiled matmul from MATMUL_PARALLEL_MIN_WORK, the conv rule's tile
from CONV_PARALLEL_MIN_WORK, the window rule's from WINDOW_, POOL_ or
GROUPED_PARALLEL_MIN_WORK as the kernel is a dense conv, a pool or a grouped conv, the
attention and generic rules from PARALLEL_MIN_WORK. A tuning candidate competes with that
default kernel: ``parallel_min_work`` tells the tuner's postprocessor which threshold the
rule that schedules a kernel uses, so that a candidate threads where its default does.

>>> from rvm.te.create_prim_func import create_prim_func
>>> from rvm.te.operation import compute, placeholder
>>> A = placeholder((4, 100), name="A")
>>> double = create_prim_func([A, compute((4, 100), lambda i, j: A[i, j] * 2.0)])
>>> parallel_min_work(double, CPUInfo(vector_bytes=64, cores=2)) == ("generic", 1 << 24)
True
"""
from rvm.dlight.analysis import (
    CONV_PARALLEL_MIN_WORK, MATMUL_PARALLEL_MIN_WORK, PARALLEL_MIN_WORK, loop_kinds,
)
from rvm.dlight.base import trace_default_schedule
from rvm.dlight.cpu.conv import _parallel_min_work as window_min_work, _row_loop, one_reduction
from rvm.dlight.cpu.rules import RULES
from rvm.dlight.target import CPUInfo  # noqa: F401  (the doctest's)
from rvm.tir.schedule.schedule import Schedule

# The rules whose threshold does not depend on the kernel; "window" chooses per kernel.
RULE_MIN_WORK = {
    "matmul": MATMUL_PARALLEL_MIN_WORK,
    "conv": CONV_PARALLEL_MIN_WORK,
    "attention": PARALLEL_MIN_WORK,
    "generic": PARALLEL_MIN_WORK,
}


def _window(func):
    """The window rule's threshold for ``func`` (a kernel the rule applies to): the same
    analysis as the rule's, on a fresh schedule (its row loop, or the pool's one input)."""
    sch = Schedule(func)
    blocks, index = one_reduction(sch)
    conv = blocks[index]
    kinds = loop_kinds(sch, conv)
    spatial = sch.get_loops(conv)[:kinds.index("R")]
    return window_min_work(sch.get(conv), _row_loop(sch, conv, spatial[:-1], spatial[-1]))


def rule_min_work(rule, func):
    """The threshold the default rule named ``rule`` uses for ``func``, the kernel it
    schedules; None for a rule name it does not know."""
    if rule == "window":
        return _window(func)
    return RULE_MIN_WORK.get(rule)


def parallel_min_work(func, info, rules=RULES):
    """``(rule name, threshold)`` of the first of ``rules`` that schedules ``func`` (a
    PrimFunc, or a module whose one PrimFunc is "main") for ``info``, or None when no rule
    does (the default kernel is the unscheduled loop nest, serial)."""
    found = trace_default_schedule(func, rules, info)
    if found is None:
        return None
    name = found[1]
    if hasattr(func, "functions"):  # an IRModule
        func = func["main"]
    threshold = rule_min_work(name, func)
    return None if threshold is None else (name, threshold)
