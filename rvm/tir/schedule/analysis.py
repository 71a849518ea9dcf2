"""Facts about scheduled TIR the primitives check: loops of a block, child blocks, block kinds,
bindings, data dependences between the blocks of a scope, and regions relaxed over loops."""
from rvm.tir import op as _op
from rvm.tir.free_vars import used_vars as vars_in  # noqa: F401  (used by primitives)
from rvm.tir.analysis.region import relax_range
from rvm.tir.arith import Analyzer
from rvm.tir.expr import Add, Cast, FloorDiv, FloorMod, IntImm, IterVar, Mul, Range, Sub, Var
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.state import children_of, describe
from rvm.tir.stmt import BlockRealize
from rvm.tir.stmt_functor import substitute


# -- tree structure ----------------------------------------------------------------------
def loops_of(block_sref):
    """The loops enclosing a block inside its scope, outermost first."""
    loops = []
    for sref in block_sref.ancestors():
        if sref.is_block:
            break
        loops.append(sref)
    return loops[::-1]


def scope_of(sref):
    """The sref of the nearest enclosing block (None for the root block)."""
    for parent in sref.ancestors():
        if parent.is_block:
            return parent
    return None


def is_ancestor(upper, lower):
    """Whether ``upper`` encloses ``lower`` (strictly)."""
    return any(a is upper for a in lower.ancestors())


def child_blocks(state, sref):
    """The srefs of the blocks directly under a block or loop (not inside other blocks),
    in execution order."""
    out = []

    def walk(stmt):
        for child in children_of(stmt):
            if isinstance(child, BlockRealize):
                out.append(state.block_sref(child.block))
            else:
                walk(child)

    walk(sref.stmt)
    return out


def blocks_under(state, sref):
    """Every block sref in the subtree of a loop or block (nested ones too), in order."""
    out = []

    def walk(stmt):
        for child in children_of(stmt):
            if isinstance(child, BlockRealize):
                out.append(state.block_sref(child.block))
            walk(child)

    walk(sref.stmt)
    return out


# -- blocks -----------------------------------------------------------------------------
def is_reduction_block(block):
    """A block with an init whose axes are spatial or reduction, and whose output indices
    use spatial axes only."""
    if block.init is None:
        return False
    if any(iv.iter_type not in (IterVar.DataPar, IterVar.CommReduce) for iv in block.iter_vars):
        return False
    reduce_ids = {id(iv.var) for iv in block.iter_vars if iv.iter_type == IterVar.CommReduce}
    for region in block.writes:
        for rng in region.region:
            if set(vars_in(rng.min)) & reduce_ids:
                return False
    return True


def is_complete_block(block):
    """A block with spatial axes only, no init, and no buffer both read and written."""
    if block.init is not None:
        return False
    if any(iv.iter_type != IterVar.DataPar for iv in block.iter_vars):
        return False
    written = {id(r.buffer) for r in block.writes}
    return not any(id(r.buffer) in written for r in block.reads)


def require_complete_or_reduction(primitive, block_sref):
    """ScheduleError unless the block is complete or a reduction block."""
    block = block_sref.stmt
    if not (is_complete_block(block) or is_reduction_block(block)):
        raise ScheduleError(primitive, "the block must be a complete block (spatial axes, no "
                            "buffer both read and written) or a reduction block (an init, "
                            "spatial and reduction axes)", describe(block_sref))


def loop_bound_iter_types(realize, loop_var):
    """The iter types (SPATIAL, REDUCTION ...) of the axes of a BlockRealize whose binding
    uses ``loop_var``."""
    types = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if id(loop_var) in vars_in(value):
            types.add(iv.iter_type)
    return types


def is_quasi_affine(expr, var_ids):
    """Whether ``expr`` is built from the given variables and constants with +, -, * by a
    constant, and // or % by a positive constant (the bindings split and fuse make)."""
    if isinstance(expr, IntImm):
        return True
    if isinstance(expr, Var):
        return id(expr) in var_ids
    if isinstance(expr, Cast):
        return expr.dtype.is_int and is_quasi_affine(expr.value, var_ids)
    if isinstance(expr, (Add, Sub)):
        return is_quasi_affine(expr.a, var_ids) and is_quasi_affine(expr.b, var_ids)
    if isinstance(expr, Mul):
        return (isinstance(expr.b, IntImm) and is_quasi_affine(expr.a, var_ids)) or \
            (isinstance(expr.a, IntImm) and is_quasi_affine(expr.b, var_ids))
    if isinstance(expr, (FloorDiv, FloorMod)):
        return isinstance(expr.b, IntImm) and expr.b.value > 0 and \
            is_quasi_affine(expr.a, var_ids)
    return False


def require_affine_binding(primitive, block_sref):
    """ScheduleError unless every binding of the block is quasi-affine in its loops."""
    loop_ids = {id(s.stmt.loop_var) for s in loops_of(block_sref)}
    realize = block_sref.realize
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if not is_quasi_affine(value, loop_ids):
            raise ScheduleError(primitive, "the block's bindings must be affine in its loop "
                                "variables", describe(block_sref),
                                f"axis {iv.var.name_hint} is bound to {value!r}")


# -- dependences ------------------------------------------------------------------------
RAW, WAW, WAR = "RAW", "WAW", "WAR"


def block_reads(block):
    """Buffers a block reads (a reduction block also reads back its output)."""
    out = [r.buffer for r in block.reads]
    if block.init is not None:
        out.extend(r.buffer for r in block.writes)
    return out


class BlockScope:
    """The data dependences among the child blocks of a scope block, in execution order:
    (kind, source sref, destination sref, buffer) with the source running first."""

    def __init__(self, state, scope_sref):
        self.blocks = child_blocks(state, scope_sref)
        self.deps = []
        writers, readers = {}, {}
        for sref in self.blocks:
            block = sref.stmt
            for buf in block_reads(block):
                for w in writers.get(id(buf), ()):
                    if w is not sref:
                        self.deps.append((RAW, w, sref, buf))
            for region in block.writes:
                buf = region.buffer
                for w in writers.get(id(buf), ()):
                    if w is not sref:
                        self.deps.append((WAW, w, sref, buf))
                for r in readers.get(id(buf), ()):
                    if r is not sref:
                        self.deps.append((WAR, r, sref, buf))
            for buf in block_reads(block):
                readers.setdefault(id(buf), []).append(sref)
            for region in block.writes:
                writers.setdefault(id(region.buffer), []).append(sref)
        self.writers = writers

    def producers(self, sref):
        """Blocks this one reads results of (read-after-write sources), in order, unique."""
        return _unique(src for kind, src, dst, _ in self.deps if kind == RAW and dst is sref)

    def consumers(self, sref):
        """Blocks reading results of this one (read-after-write destinations), unique."""
        return _unique(dst for kind, src, dst, _ in self.deps if kind == RAW and src is sref)

    def writers_of(self, buffer):
        """The blocks of the scope writing ``buffer``."""
        return self.writers.get(id(buffer), [])


def _unique(srefs):
    out = []
    for s in srefs:
        if not any(s is o for o in out):
            out.append(s)
    return out


def require_dominant(primitive, scope, block_sref):
    """ScheduleError unless the block is the only writer of each buffer it writes."""
    for region in block_sref.stmt.writes:
        writers = scope.writers_of(region.buffer)
        if len(writers) > 1:
            others = ", ".join(f'"{w.stmt.name_hint}"' for w in writers if w is not block_sref)
            raise ScheduleError(primitive, "the block must be the only writer of its output "
                                "buffers in its scope", describe(block_sref),
                                f"buffer {region.buffer.name} is also written by {others}")


# -- regions ----------------------------------------------------------------------------
def bound_regions(realize, regions, ranges, analyzer):
    """``regions`` of a block (in its axes) as regions of the enclosing loops, relaxed over
    the loops in ``ranges``; a dimension that cannot be bounded covers the whole buffer."""
    mapping = {id(iv.var): v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    for iv in realize.block.iter_vars:
        if id(iv.var) not in mapping:
            mapping[id(iv.var)] = iv.var
    out = []
    for region in regions:
        dims = []
        for rng, dim in zip(region.region, region.buffer.shape):
            bound = Range.from_min_extent(substitute(rng.min, lambda v: mapping.get(id(v))),
                                          substitute(rng.extent, lambda v: mapping.get(id(v))))
            relaxed = relax_range(bound, ranges, analyzer)
            if relaxed is None:
                relaxed = Range.from_min_extent(_op.const(0, dim.dtype), dim)
            dims.append(relaxed)
        out.append((region.buffer, dims))
    return out


def loop_ranges(loop_srefs):
    """{id(loop var): Range} of some loops."""
    return {id(s.stmt.loop_var): Range.from_min_extent(s.stmt.min, s.stmt.extent)
            for s in loop_srefs}


def analyzer_for(loop_srefs):
    """An Analyzer knowing the ranges of the given loops."""
    ana = Analyzer()
    for s in loop_srefs:
        ana.bind(s.stmt.loop_var, Range.from_min_extent(s.stmt.min, s.stmt.extent))
    return ana


def const_extent(loop):
    """The constant extent of a For, or None."""
    return loop.extent.value if isinstance(loop.extent, IntImm) else None
