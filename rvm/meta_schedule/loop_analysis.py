"""Facts about blocks and loops of a schedule that the rules and postprocessors need.

All functions read the IR through ``sch.get``, ``sch.get_sref`` and ``sch.mod``; none
changes it.
"""
from rvm.tir.free_vars import used_vars
from rvm.tir.expr import IterVar
from rvm.tir.schedule.analysis import blocks_under, loop_bound_iter_types
from rvm.tir.stmt_functor import StmtExprVisitor

SPATIAL, REDUCTION = IterVar.DataPar, IterVar.CommReduce


def loop_types(sch, loop_rv):
    """The iteration types every block under the loop gives its variable (empty: none)."""
    sref = sch.get_sref(loop_rv)
    types = set()
    for block in blocks_under(sch.state, sref):
        types |= loop_bound_iter_types(block.realize, sref.stmt.loop_var)
    return types


def block_names(func):
    """The names of the blocks of ``func`` except the root, in program order."""
    names = []

    class _Blocks(StmtExprVisitor):
        def visit_block_(self, op):
            if op.name_hint != "root" and op.name_hint not in names:
                names.append(op.name_hint)
            super().visit_block_(op)

    _Blocks().visit(func.body)
    return names


def block_kinds(block):
    """The block's axis types as a string: "SSR" for a matmul."""
    letters = {SPATIAL: "S", REDUCTION: "R"}
    return "".join(letters.get(iv.iter_type, "O") for iv in block.iter_vars)


def is_reduction_block(block):
    """A block with spatial and reduction axes only, and at least one of each."""
    kinds = block_kinds(block)
    return "R" in kinds and "S" in kinds and "O" not in kinds


def is_spatial_block(block):
    """A block whose axes are all spatial."""
    kinds = block_kinds(block)
    return bool(kinds) and set(kinds) == {"S"}


def contiguous_axis_types(sch, block_rv):
    """For each buffer the block reads: the type of the block axis its last index uses
    (None when the last index is a constant or uses several axes)."""
    realize = sch.get_sref(block_rv).realize
    block = realize.block
    axis_type = {id(iv.var): iv.iter_type for iv in block.iter_vars}
    out = []
    for region in block.reads:
        if not region.region:
            continue
        last = region.region[-1].min
        used = [axis_type[v] for v in used_vars(last) if v in axis_type]
        out.append(used[0] if len(used) == 1 else None)
    return out
