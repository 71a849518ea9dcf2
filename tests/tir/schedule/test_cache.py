"""cache_read and cache_write: Before/Expected, numerics, illegal uses."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, Matmul, MatmulRelu, check_schedule


def test_cache_read_then_compute_at():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 C: T.Buffer((128, 128), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            A_local = T.alloc_buffer((128, 128), scope="local")
            for i in range(128):
                for ax0 in range(128):
                    with T.block("A_local"):
                        v0, v1 = T.axis.remap("SS", [i, ax0])
                        A_local[v0, v1] = A[v0, v1]
                for j, k in T.grid(128, 128):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A_local[vi, vk] * B[vk, vj]

    sch = Schedule(Matmul, debug_mask="all")
    c = sch.get_block("C")
    cached = sch.cache_read(c, 0, "local")
    assert sch.get(cached).name_hint == "A_local"
    sch.compute_at(cached, sch.get_loops(c)[0])
    check_schedule(sch, Matmul, Expected)


def test_cache_write_register_tile():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                 D: T.Buffer((32, 32), "float32")):
            T.func_attr({"tir.noalias": True})
            C = T.alloc_buffer((32, 32))
            C_local = T.alloc_buffer((32, 32), scope="local")
            for i_0, j_0 in T.grid(8, 2):
                for k, i_1, j_1 in T.grid(32, 4, 16):
                    with T.block("C"):
                        vi = T.axis.spatial(32, i_0 * 4 + i_1)
                        vj = T.axis.spatial(32, j_0 * 16 + j_1)
                        vk = T.axis.reduce(32, k)
                        with T.init():
                            C_local[vi, vj] = T.float32(0)
                        C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                for ax0, ax1 in T.grid(4, 16):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(32, i_0 * 4 + ax0)
                        v1 = T.axis.spatial(32, j_0 * 16 + ax1)
                        C[v0, v1] = C_local[v0, v1]
            for i, j in T.grid(32, 32):
                with T.block("D"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = T.max(C[vi, vj], T.float32(0))

    sch = Schedule(MatmulRelu, debug_mask="all")
    c = sch.get_block("C")
    write_back = sch.cache_write(c, 0, "local")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(write_back, j0)
    check_schedule(sch, MatmulRelu, Expected)


def test_cache_write_with_a_consumer_reading_the_cache():
    sch = Schedule(MatmulRelu, debug_mask="all")
    c, d = sch.get_block("C"), sch.get_block("D")
    sch.cache_write(c, 0, "global", consumer_blocks=[d])
    assert "C_global" in [r.buffer.name for r in sch.get(d).reads]
    check_schedule(sch, MatmulRelu)


def test_cache_read_for_chosen_consumers():
    sch = Schedule(Elementwise, debug_mask="all")
    c = sch.get_block("C")
    sch.cache_read(c, 0, "global", consumer_blocks=[c])
    check_schedule(sch, Elementwise)


def test_cache_read_rejects_a_bad_buffer_index():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="must index the block's reads"):
        sch.cache_read(sch.get_block("C"), 5, "local")


def test_cache_write_rejects_an_unknown_scope():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="storage_scope must be one of"):
        sch.cache_write(sch.get_block("C"), 0, "texture")


def test_cache_write_rejects_a_bad_buffer_index():
    sch = Schedule(Matmul)
    with pytest.raises(ScheduleError, match="must index the block's writes"):
        sch.cache_write(sch.get_block("C"), 1, "local")


def test_cache_read_rejects_a_consumer_that_does_not_read_the_buffer():
    sch = Schedule(MatmulRelu)
    with pytest.raises(ScheduleError, match="must read the buffer"):
        sch.cache_read(sch.get_block("C"), 0, "local", consumer_blocks=[sch.get_block("D")])


@I.ir_module
class PaddedPool:
    @T.prim_func
    def main(x: T.Buffer((1, 1, 8, 8), "float32"), y: T.Buffer((1, 1, 4, 4), "float32")):
        T.func_attr({"tir.noalias": True})
        for n, c, h, w, kh, kw in T.grid(1, 1, 4, 4, 3, 3):
            with T.block("pool"):
                vn, vc, vh, vw, vkh, vkw = T.axis.remap("SSSSRR", [n, c, h, w, kh, kw])
                with T.init():
                    y[vn, vc, vh, vw] = T.float32(-3.0e38)
                y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw], T.if_then_else(
                    1 <= vh * 2 + vkh and vh * 2 + vkh < 9 and 1 <= vw * 2 + vkw
                    and vw * 2 + vkw < 9, x[vn, vc, vh * 2 + vkh - 1, vw * 2 + vkw - 1],
                    T.float32(-3.0e38)))


@I.ir_module
class PaddedWindow:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        x = T.match_buffer(a, (n,), "float32")
        y = T.match_buffer(b, (n,), "float32")
        for i, k in T.grid(n, T.int64(3)):
            with T.block("window"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + T.if_then_else(T.int64(1) <= vi + vk and vi + vk < n + T.int64(1),
                                               x[vi + vk - T.int64(1)], T.float32(0))


def _guarded_accesses(mod):
    from rvm.codegen.c.kernel_signature import kernel_functions
    from rvm.codegen.c.source import render_c_source
    from rvm.tir.transform.pipeline import lower_module

    return render_c_source(kernel_functions(lower_module(mod)), False).count("rvm_i >= 0")


def test_cache_read_of_a_padded_window_copies_only_the_buffer():
    """A pool's window reaches x[-1] and x[8] under its bounds test: the copy takes x[0:8],
    never an index outside x, and the bounds prover proves it."""
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(x: T.Buffer((1, 1, 8, 8), "float32"), y: T.Buffer((1, 1, 4, 4), "float32")):
            T.func_attr({"tir.noalias": True})
            x_global = T.alloc_buffer((1, 1, 8, 8))
            for ax0, ax1, ax2, ax3 in T.grid(1, 1, 8, 8):
                with T.block("x_global"):
                    v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                    x_global[v0, v1, v2, v3] = x[v0, v1, v2, v3]
            for n, c, h, w, kh, kw in T.grid(1, 1, 4, 4, 3, 3):
                with T.block("pool"):
                    vn, vc, vh, vw, vkh, vkw = T.axis.remap("SSSSRR", [n, c, h, w, kh, kw])
                    with T.init():
                        y[vn, vc, vh, vw] = T.float32(-3.0e38)
                    y[vn, vc, vh, vw] = T.max(y[vn, vc, vh, vw], T.if_then_else(
                        1 <= vh * 2 + vkh and vh * 2 + vkh < 9 and 1 <= vw * 2 + vkw
                        and vw * 2 + vkw < 9, x_global[vn, vc, vh * 2 + vkh - 1,
                                                       vw * 2 + vkw - 1],
                        T.float32(-3.0e38)))

    sch = Schedule(PaddedPool, debug_mask="all")
    sch.cache_read(sch.get_block("pool"), 0, "global")
    check_schedule(sch, PaddedPool, Expected)
    # the copy is proven (the pool's own read under its two-sided test stays guarded)
    assert _guarded_accesses(sch.mod) == _guarded_accesses(PaddedPool) == 1


def test_cache_read_of_a_symbolic_padded_window_stays_inside_the_buffer():
    sch = Schedule(PaddedWindow, debug_mask="all")
    copy = sch.cache_read(sch.get_block("window"), 0, "global")
    loop = sch.get(sch.get_loops(copy)[0])
    n = PaddedWindow["main"].buffer_map[PaddedWindow["main"].params[0]].shape[0]
    assert loop.min.value == 0 and loop.extent.same_as(n)  # x[0:n], not x[-1:n + 1]
    check_schedule(sch, PaddedWindow, numeric=False)
    assert _guarded_accesses(sch.mod) == 0
