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
