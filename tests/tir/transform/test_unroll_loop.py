"""UnrollLoop: loops under pragma_auto_unroll_max_step unroll within the step budget."""
from rvm.ir import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.transform import UnrollLoop


@I.ir_module
class Before:
    @T.prim_func
    def main(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4, 16), "float32")):
        for i in T.serial(8, annotations={"pragma_auto_unroll_max_step": 8}):
            for j in range(4):
                for k in T.vectorized(16):
                    B[i, j, k] = A[i, j, k] * T.float32(2)
            for j, k in T.grid(4, 16):
                B[i, j, k] = B[i, j, k] + T.float32(1)


@I.ir_module
class Expected:
    @T.prim_func
    def main(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4, 16), "float32")):
        for i in T.serial(8, annotations={"pragma_auto_unroll_max_step": 8}):
            for j in T.unroll(4):
                for k in T.vectorized(16):
                    B[i, j, k] = A[i, j, k] * T.float32(2)
            for j, k in T.grid(4, 16):
                B[i, j, k] = B[i, j, k] + T.float32(1)


def test_loops_within_the_budget_unroll():
    assert_structural_equal(UnrollLoop()(Before), Expected)


def test_without_annotation_nothing_unrolls():
    @I.ir_module
    class Plain:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(0)

    assert UnrollLoop()(Plain) is Plain
