"""Hand-written kernels for the tuner's tests: a copy and its broken variants.

Each is a module with one PrimFunc "main" over A and B (float32[16]): the
reference copies A into B; the variants crash (the kernel calls abort(): an
out-of-bounds index no longer crashes, since the kernel's guard catches it), hang (a loop whose condition never changes) or compute a wrong
result (B = A + 1).
"""
from rvm.script import ir as I, tir as T  # noqa: E741


@I.ir_module
class Copy:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]


@I.ir_module
class Crash:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
                T.evaluate(T.call_extern("int32", "abort"))


@I.ir_module
class Hang:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                while A[0] < T.float32(2):
                    B[vi] = A[vi]


@I.ir_module
class Wrong:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi] + T.float32(1)


@I.ir_module
class Unrenderable:
    """The C backend cannot render vector dtypes: lowering for C fails."""

    @T.prim_func
    def main(A: T.Buffer((16,), "float32x4"), B: T.Buffer((16,), "float32x4")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]


@I.ir_module
class UnrolledCopy:
    """Copy with its loop unrolled: a heavier compile."""

    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.unroll(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
