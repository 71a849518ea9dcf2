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
