"""Facts about blocks and loops of a schedule that the rules and postprocessors need.

All functions read the IR through ``sch.get``/``sch.mod``; none changes it.
"""
from rvm.tir.analysis.free_vars import used_vars
from rvm.tir.expr import IterVar
from rvm.tir.schedule.analysis import loop_bound_iter_types
from rvm.tir.stmt import BlockRealize
from rvm.tir.stmt_functor import StmtExprVisitor, post_order_visit

SPATIAL, REDUCTION = IterVar.DataPar, IterVar.CommReduce


def realizes_under(stmt):
    """Every BlockRealize inside ``stmt`` (``stmt`` itself included)."""
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, BlockRealize) else None)
    return found


def realize_of(sch, block_rv):
    """The BlockRealize of the block ``block_rv`` refers to."""
    block = sch.get(block_rv)
    func = sch.mod[sch.func_working_on or "main"]
    for realize in realizes_under(func.body):
        if realize.block is block:
            return realize
    raise ValueError(f"block {block.name_hint!r} is not in the scheduled function")


def loop_types(sch, loop_rv):
    """The iteration types every block under the loop gives its variable (empty: none)."""
    loop = sch.get(loop_rv)
    types = set()
    for realize in realizes_under(loop.body):
        types |= loop_bound_iter_types(realize, loop.loop_var)
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
    realize = realize_of(sch, block_rv)
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
