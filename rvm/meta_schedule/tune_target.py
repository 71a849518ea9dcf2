"""The target of a tuning run: an ``rvm.target.Target`` of a CPU kind ("llvm" or "c").

Candidates are C kernels measured on this machine, so only CPU targets can
be tuned; ``num_cores`` is the target's ``--num-cores`` or, when absent, the
cores this process may use.

>>> str(tune_target("llvm --num-cores=1")), num_cores(tune_target("llvm --num-cores=1"))
('llvm -keys=cpu -num-cores=1', 1)
"""
import os

from rvm.target.target import as_target

CPU_KINDS = ("llvm", "c")


def tune_target(target):
    """``target`` (a string such as "llvm --num-cores=1", a dict or a Target) as a Target;
    ValueError for a kind that cannot be tuned."""
    target = as_target(target)
    if target.kind.name not in CPU_KINDS:
        raise ValueError(f"cannot tune for target {target}: candidates are measured as C "
                         f"kernels; expected a target of kind {' or '.join(CPU_KINDS)}")
    return target


def num_cores(target):
    """The cores schedules for ``target`` may use."""
    cores = getattr(target, "num_cores", None)
    if cores:
        return int(cores)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
