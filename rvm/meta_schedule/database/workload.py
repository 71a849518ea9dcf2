"""Workloads: the kernels a database holds records for, identified by structural hash.

A workload is an IRModule holding one PrimFunc named "main" whose
``global_symbol`` is "main" (``workload_module`` brings any kernel to that
form, so a kernel taken out of a Relax module and the same kernel given to
``tune_tir`` are one workload). Its JSON form is
``[structural hash as a decimal string, script text]``.
"""
from rvm.ir.module import IRModule
from rvm.ir.base import structural_equal, structural_hash
from rvm.tir.function import PrimFunc


def workload_module(mod):
    """``mod`` (an IRModule with one PrimFunc or a "main" PrimFunc, or a PrimFunc) as a
    workload module: {"main": the PrimFunc with global_symbol "main"}."""
    from rvm.meta_schedule.arg_info import entry_prim_func

    func = entry_prim_func(mod)
    if func.get_attr("global_symbol") != "main":
        func = func.with_attr("global_symbol", "main")
    return IRModule({"main": func})


class Workload:
    """A kernel to tune: ``mod`` (a workload module) and its structural hash ``shash``."""

    def __init__(self, mod, shash=None):
        if not isinstance(mod, IRModule) or not all(isinstance(f, PrimFunc)
                                                    for _, f in mod.functions.items()):
            raise TypeError(f"a Workload holds an IRModule of PrimFuncs, got {mod!r:.80}")
        self.mod = mod
        self.shash = structural_hash(mod) if shash is None else int(shash)

    def matches(self, mod):
        """Whether ``mod`` (a workload module) is this workload."""
        return structural_hash(mod) == self.shash and structural_equal(mod, self.mod)

    def as_json(self):
        """``[str(shash), script text]``."""
        return [str(self.shash), self.mod.script()]

    @staticmethod
    def from_json(data):
        """The Workload written by ``as_json`` (ValueError for anything else)."""
        from rvm.script.parser.entry import from_source

        if (not isinstance(data, list) or len(data) != 2 or not isinstance(data[0], str)
                or not data[0].isdigit() or not isinstance(data[1], str)):
            raise ValueError("a workload is [structural hash (decimal string), script text], "
                             f"got {str(data)[:80]}")
        mod = from_source(data[1])
        if not isinstance(mod, IRModule):
            mod = IRModule.from_expr(mod, "main")
        return Workload(mod, int(data[0]))

    def __repr__(self):
        return f"Workload(shash={self.shash})"
