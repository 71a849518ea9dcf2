from rvm import tir
from rvm.tir.analysis import get_block_read_write_region
from tests.tir.builders import matmul_func


def _iv(name, extent, kind=tir.IterVar.DataPar):
    return tir.IterVar(tir.Range(0, extent), tir.Var(name), kind)


def test_point_accesses_and_reduction_readback_excluded():
    f = matmul_func()
    block = f.body.block.body.body.body.body.block
    plain = block.with_fields(reads=(), writes=())
    reads, writes = get_block_read_write_region(plain)
    assert [r.buffer.name for r in reads] == ["A", "B"]
    assert [w.buffer.name for w in writes] == ["C"]
    assert reads[0].region[0].min is block.iter_vars[0].var
    assert reads[0].region[0].extent.value == 1


def test_inner_loops_are_relaxed():
    A = tir.decl_buffer((16,), name="A")
    B = tir.decl_buffer((4,), name="B")
    v = _iv("v", 4)
    l = tir.Var("l")
    body = tir.For(l, 0, 4, "serial", tir.BufferStore(B, A[v.var * 4 + l], [v.var]))
    reads, writes = get_block_read_write_region(tir.Block([v], [], [], "b", body))
    rng = reads[0].region[0]
    assert rng.min.same_as(tir.Mul(v.var, tir.const(4))) or repr(rng.min) == "v * 4"
    assert rng.extent.value == 4


def test_regions_of_one_buffer_are_merged():
    A = tir.decl_buffer((16,), name="A")
    B = tir.decl_buffer((16,), name="B")
    v = _iv("v", 8)
    body = tir.BufferStore(B, A[v.var] + A[v.var + 2], [v.var])
    reads, _ = get_block_read_write_region(tir.Block([v], [], [], "b", body))
    assert len(reads) == 1
    assert repr(reads[0].region[0].min) == "v" and reads[0].region[0].extent.value == 3


def test_in_place_update_without_init_keeps_read():
    A = tir.decl_buffer((4,), name="A")
    v = _iv("v", 4)
    body = tir.BufferStore(A, A[v.var] + 1.0, [v.var])
    reads, writes = get_block_read_write_region(tir.Block([v], [], [], "b", body))
    assert [r.buffer.name for r in reads] == ["A"] and [w.buffer.name for w in writes] == ["A"]


def test_allocated_buffers_are_not_accesses_and_nested_blocks_count():
    f = matmul_func()
    reads, writes = get_block_read_write_region(f.body.block)
    assert [r.buffer.name for r in reads] == ["A", "B"]
    assert [(r.min.value, r.extent.value) for r in reads[0].region] == [(0, 4), (0, 6)]
    local = tir.decl_buffer((4,), name="L")
    v = _iv("v", 4)
    blk = tir.Block([v], [], [], "b", tir.BufferStore(local, 1.0, [v.var]),
                    alloc_buffers=[local])
    assert get_block_read_write_region(blk) == ([], [])


def _gather_block(copies=6):
    """A block shaped like an inlined nearest-neighbour resize: Y[v] sums X at indices
    read from P (clamped into X, as ONNX's negative-index wrap then clamp does), each
    access repeated ``copies`` times, and Z at ``v + k`` for 16 offsets ``k``."""
    X = tir.decl_buffer((16,), name="X")
    Z = tir.decl_buffer((32,), name="Z")
    P = tir.decl_buffer((8,), "int64", name="P")
    Y = tir.decl_buffer((16,), name="Y")
    v = _iv("v", 16)
    indices = []
    for k in range(8):
        p = P[tir.const(k, "int64")]
        wrapped = tir.if_then_else(p < tir.const(0, "int64"), p + tir.const(16, "int64"), p)
        indices += [tir.max(tir.min(wrapped, tir.const(15, "int64")), tir.const(0, "int64"))
                    ] * copies
    value = tir.const(0.0)
    for index in indices:
        value = value + X[index]
    offsets = [tir.Cast("int64", v.var) + tir.const(k, "int64") for k in range(16)]
    for index in offsets:
        value = value + Z[index]
    body = tir.BufferStore(Y, value, [v.var])
    return tir.Block([v], [], [], "gather", body), v.var, P, indices, offsets


class _Concrete(tir.stmt_functor.StmtExprMutator):
    """An index expression with the block variable and P's elements given values."""

    def __init__(self, var, v, P, p):
        self.var, self.v, self.P, self.p = var, v, P, p

    def visit_var_(self, op):
        return tir.const(self.v, op.dtype) if op is self.var else op

    def visit_buffer_load_(self, op):
        if op.buffer is self.P:
            return tir.const(int(self.p[op.indices[0].value]), "int64")
        return self._generic(op)


def _value(expr, concrete):
    from rvm.tir.arith import simplify

    out = simplify(concrete.visit(expr))
    assert isinstance(out, tir.IntImm), out
    return out.value


def test_many_accesses_merge_fast_into_a_region_covering_each():
    import time

    import numpy as np

    block, var, P, gathers, offsets = _gather_block()
    start = time.thread_time()
    reads, _ = get_block_read_write_region(block)
    seconds = time.thread_time() - start
    assert seconds < 1.0, f"merging {len(gathers) + len(offsets)} accesses took {seconds:.2f}s"
    region = {r.buffer.name: r.region[0] for r in reads}
    assert set(region) == {"X", "Z", "P"}
    rng = np.random.default_rng(0)
    for v in (0, 5, 15):
        for p in (rng.integers(-20, 20, 8), np.full(8, -1), np.arange(8)):
            concrete = _Concrete(var, v, P, p)
            for name, indices in (("X", gathers), ("Z", offsets)):
                lo = _value(region[name].min, concrete)
                end = lo + _value(region[name].extent, concrete)
                for index in indices:
                    assert lo <= _value(index, concrete) < end, (name, v, p)
    # the offsets keep their exact bounding box: v .. v + 15
    assert repr(region["Z"].extent) in ("T.int64(16)", "16")


def test_distinct_unbounded_accesses_widen_to_the_buffer():
    from rvm.tir.analysis.block_access import MAX_BOUNDS

    X = tir.decl_buffer((16,), name="X")
    P = tir.decl_buffer((MAX_BOUNDS + 4,), "int32", name="P")
    Y = tir.decl_buffer((1,), name="Y")
    v = _iv("v", 1)
    value = tir.const(0.0)
    for k in range(MAX_BOUNDS + 4):
        value = value + X[P[k]]  # data-dependent, no constant bounds
    reads, _ = get_block_read_write_region(
        tir.Block([v], [], [], "b", tir.BufferStore(Y, value, [v.var])))
    x = [r for r in reads if r.buffer.name == "X"][0].region[0]
    assert (x.min.value, x.extent.value) == (0, 16)
    few = tir.Block([v], [], [], "b", tir.BufferStore(Y, X[P[0]] + X[P[1]], [v.var]))
    x = [r for r in get_block_read_write_region(few)[0] if r.buffer.name == "X"][0].region[0]
    assert "P" in repr(x.min)  # two accesses stay exact: min(P[0], P[1])


def test_an_index_past_max_index_nodes_covers_the_whole_dimension():
    from rvm.tir.analysis.block_access import MAX_INDEX_NODES

    X = tir.decl_buffer((16,), name="X")
    Y = tir.decl_buffer((16,), name="Y")
    v = _iv("v", 16)
    index = v.var
    for _ in range(7):  # a producer chain inlined: each step uses its input three times
        index = tir.max(tir.min(index, tir.const(15)), index - index)
    reads, _ = get_block_read_write_region(
        tir.Block([v], [], [], "b", tir.BufferStore(Y, X[index], [v.var])))
    x = reads[0].region[0]
    assert (x.min.value, x.extent.value) == (0, 16)
    small = tir.Block([v], [], [], "b", tir.BufferStore(Y, X[tir.min(v.var, 15)], [v.var]))
    assert "v" in repr(get_block_read_write_region(small)[0][0].region[0].min)
    assert MAX_INDEX_NODES < 3 ** 7
