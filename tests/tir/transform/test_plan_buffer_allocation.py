"""PlanAndUpdateBufferAllocationLocation: allocations move to the innermost loop holding
their accesses (private to each iteration of a parallel loop), unless values flow from
one iteration to the next. Includes the race the issue reported: a parallel tiled
matmul with a local scratch buffer, run 200 times."""
import numpy as np

import rvm
from rvm.ir import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule
from rvm.tir.transform import LowerOpaqueBlock, PlanAndUpdateBufferAllocationLocation


@I.ir_module
class Shared:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        acc = T.allocate([64, 64], "float32", "local")
        acc_1 = T.decl_buffer((64, 64), "float32", scope="local", data=acc)
        for i in T.parallel(16):
            for j, ii in T.grid(64, 4):
                acc_1[i * 4 + ii, j] = A[i * 4 + ii, j] * T.float32(2)
            for j, ii in T.grid(64, 4):
                C[i * 4 + ii, j] = acc_1[i * 4 + ii, j] + T.float32(1)


def test_allocation_moves_into_the_parallel_loop():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for i in T.parallel(16):
                acc = T.allocate([64, 64], "float32", "local")
                acc_1 = T.decl_buffer((64, 64), "float32", scope="local", data=acc)
                for j, ii in T.grid(64, 4):
                    acc_1[i * 4 + ii, j] = A[i * 4 + ii, j] * T.float32(2)
                for j, ii in T.grid(64, 4):
                    C[i * 4 + ii, j] = acc_1[i * 4 + ii, j] + T.float32(1)

    assert_structural_equal(PlanAndUpdateBufferAllocationLocation()(Shared), Expected)


@I.ir_module
class Carried:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        prev = T.allocate([1], "float32", "local")
        prev_1 = T.decl_buffer((1,), "float32", scope="local", data=prev)
        for i in range(8):
            B[i] = prev_1[0]
            prev_1[0] = A[i]


def test_a_buffer_carrying_values_across_iterations_stays_outside():
    assert PlanAndUpdateBufferAllocationLocation()(Carried) is Carried


@I.ir_module
class UsedTwice:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        t = T.allocate([8], "float32", "global")
        t_1 = T.decl_buffer((8,), "float32", data=t)
        for i in range(8):
            t_1[i] = A[i] + T.float32(1)
        for i in range(8):
            B[i] = t_1[7 - i]


def test_accesses_in_different_loops_keep_the_allocation():
    assert PlanAndUpdateBufferAllocationLocation()(UsedTwice) is UsedTwice


def test_reduction_accumulator_moves_under_the_tile_loop():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
            acc = T.alloc_buffer((16, 16), scope="local")
            for i0, j0 in T.grid(4, 4):
                for k, i1, j1 in T.grid(16, 4, 4):
                    with T.block("acc"):
                        vi = T.axis.spatial(16, i0 * 4 + i1)
                        vj = T.axis.spatial(16, j0 * 4 + j1)
                        vk = T.axis.reduce(16, k)
                        with T.init():
                            acc[vi, vj] = T.float32(0)
                        acc[vi, vj] = acc[vi, vj] + A[vi, vk] * A[vk, vj]
                for i1, j1 in T.grid(4, 4):
                    with T.block("C"):
                        vi = T.axis.spatial(16, i0 * 4 + i1)
                        vj = T.axis.spatial(16, j0 * 4 + j1)
                        C[vi, vj] = acc[vi, vj]

    from rvm.tir.transform import LowerInitBlock
    lowered = LowerOpaqueBlock()(LowerInitBlock()(Before))
    planned = PlanAndUpdateBufferAllocationLocation()(lowered)["main"]
    j0 = planned.body.body
    assert j0.loop_var.name == "j0" and type(j0.body).__name__ == "Allocate"


def _tiled_parallel_matmul():
    """A hand-scheduled 4x32-tiled parallel matmul accumulating in a local tile."""
    @I.ir_module
    class Matmul:
        @T.prim_func
        def main(A: T.Buffer((64, 128), "float32"), B: T.Buffer((128, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
            T.func_attr({"tir.noalias": True})
            for i, j, k in T.grid(64, 64, 128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = Schedule(Matmul)
    block = sch.get_block("C")
    tile = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(tile, j0)
    sch.decompose_reduction(block, k)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j1)
    return sch.mod


@I.ir_module
class SharedScratch:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"tir.noalias": True})
        acc = T.alloc_buffer((64,), "float32", scope="local")
        for i in T.parallel(64):
            for j in range(64):
                with T.block("init"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    acc[vj] = T.float32(0)
            for j, k in T.grid(64, 64):
                with T.block("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    acc[vj] = acc[vj] + A[vi, vk] * B[vk, vj]
            for j in range(64):
                with T.block("out"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = acc[vj]


def test_parallel_kernels_with_local_scratch_are_race_free_over_200_runs():
    rng = np.random.default_rng(0)
    for mod, shapes in ((_tiled_parallel_matmul(), ((64, 128), (128, 64))),
                        (SharedScratch, ((64, 64), (64, 64)))):
        lib = rvm.build(mod, target="c")
        assert "#pragma omp parallel" in lib.get_source()
        a = rng.uniform(-1, 1, shapes[0]).astype("float32")
        b = rng.uniform(-1, 1, shapes[1]).astype("float32")
        want = a @ b
        first = None
        for _ in range(200):
            c = np.zeros((64, 64), "float32")
            lib["main"](a, b, c)
            np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
            if first is None:
                first = c
            assert np.array_equal(c, first)
