"""CompactBufferAllocation: allocations shrink to the region their accesses touch."""
from rvm.ir import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.transform import CompactBufferAllocation


def test_tile_buffer_shrinks_to_its_tile():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for i in T.parallel(16):
                acc = T.allocate([64, 64], "float32", "local")
                acc_1 = T.decl_buffer((64, 64), "float32", scope="local", data=acc)
                for j, ii in T.grid(64, 4):
                    acc_1[i * 4 + ii, j] = A[i * 4 + ii, j] * T.float32(2)
                for j, ii in T.grid(64, 4):
                    C[i * 4 + ii, j] = acc_1[i * 4 + ii, j] + T.float32(1)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for i in T.parallel(16):
                acc = T.allocate([4, 64], "float32", "local")
                acc_1 = T.decl_buffer((4, 64), "float32", scope="local", data=acc)
                for j, ii in T.grid(64, 4):
                    acc_1[ii, j] = A[i * 4 + ii, j] * T.float32(2)
                for j, ii in T.grid(64, 4):
                    C[i * 4 + ii, j] = acc_1[ii, j] + T.float32(1)

    assert_structural_equal(CompactBufferAllocation()(Before), Expected)


def test_buffer_used_whole_keeps_its_shape():
    @I.ir_module
    class Whole:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            t = T.allocate([8], "float32", "global")
            t_1 = T.decl_buffer((8,), "float32", data=t)
            for i in range(8):
                t_1[i] = A[i] + T.float32(1)
            for i in range(8):
                B[i] = t_1[7 - i]

    assert CompactBufferAllocation()(Whole) is Whole


def test_offset_window_is_reindexed():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
            for i in range(8):
                t = T.allocate([40], "float32", "global")
                t_1 = T.decl_buffer((40,), "float32", data=t)
                for k in range(6):
                    t_1[i * 4 + k] = A[T.min(i * 4 + k, 31)]
                for k in range(4):
                    B[i * 4 + k] = t_1[i * 4 + k] + t_1[i * 4 + k + 2]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
            for i in range(8):
                t = T.allocate([6], "float32", "global")
                t_1 = T.decl_buffer((6,), "float32", data=t)
                for k in range(6):
                    t_1[k] = A[T.min(i * 4 + k, 31)]
                for k in range(4):
                    B[i * 4 + k] = t_1[k] + t_1[k + 2]

    assert_structural_equal(CompactBufferAllocation()(Before), Expected)


@I.ir_module
class _SymbolicTile:
    @T.prim_func
    def main(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 64))
        C = T.match_buffer(c, (n, 64))
        for i in T.parallel(n):
            acc = T.allocate([n, 64], "float32", "local")
            acc_1 = T.decl_buffer((n, 64), "float32", scope="local", data=acc)
            for j in range(64):
                acc_1[i, j] = A[i, j] * T.float32(2)
            for j in range(64):
                C[i, j] = acc_1[i, j] + T.float32(1)


def test_symbolic_dimension_shrinks_to_the_tile():
    """A register tile of a kernel with a symbolic batch: one row per iteration of the batch
    loop, not a workspace of the whole batch."""
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(a: T.handle, c: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n, 64))
            C = T.match_buffer(c, (n, 64))
            for i in T.parallel(n):
                acc = T.allocate([T.int64(1), T.int64(64)], "float32", "local")
                acc_1 = T.decl_buffer((T.int64(1), T.int64(64)), "float32", scope="local",
                                      data=acc)
                for j in range(64):
                    acc_1[0, T.Cast("int64", j)] = A[i, j] * T.float32(2)
                for j in range(64):
                    C[i, j] = acc_1[0, T.Cast("int64", j)] + T.float32(1)

    assert_structural_equal(CompactBufferAllocation()(_SymbolicTile), Expected)


def test_symbolic_dimension_used_whole_keeps_its_shape():
    @I.ir_module
    class Whole:
        @T.prim_func
        def main(a: T.handle, c: T.handle):
            n = T.int64()
            A = T.match_buffer(a, (n, 64))
            C = T.match_buffer(c, (n, 64))
            t = T.allocate([n, 64], "float32", "global")
            t_1 = T.decl_buffer((n, 64), "float32", data=t)
            for i, j in T.grid(n, 64):
                t_1[i, j] = A[i, j] * T.float32(2)
            for i, j in T.grid(n, 64):
                C[i, j] = t_1[n - 1 - i, j]

    assert CompactBufferAllocation()(Whole) is Whole
