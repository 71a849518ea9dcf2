"""HoistAccumulatorTile: the loop-invariant tile of a local accumulator is copied into a
small array around the loop (which the C compiler keeps in registers)."""
import numpy as np

import rvm
from rvm.ir import assert_structural_equal
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.transform import HoistAccumulatorTile
from rvm.tir.transform.hoist_accumulator_tile import hoist_accumulator_tile


@I.ir_module
class Before:
    @T.prim_func
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
             C: T.Buffer((16, 16), "float32")):
        for i0 in range(2):
            acc = T.allocate([8, 16], "float32", "local")
            acc_1 = T.decl_buffer((8, 16), "float32", scope="local", data=acc)
            for i2 in range(2):
                for i3, j in T.grid(4, 16):
                    acc_1[i2 * 4 + i3, j] = T.float32(0)
                for k in range(16):
                    for i3 in T.unroll(4):
                        for j in T.vectorized(16):
                            acc_1[i2 * 4 + i3, j] = acc_1[i2 * 4 + i3, j] + \
                                A[i0 * 8 + i2 * 4 + i3, k] * B[k, j]
            for i, j in T.grid(8, 16):
                C[i0 * 8 + i, j] = acc_1[i, j]


@I.ir_module
class Expected:
    @T.prim_func
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
             C: T.Buffer((16, 16), "float32")):
        for i0 in range(2):
            acc = T.allocate([8, 16], "float32", "local")
            acc_1 = T.decl_buffer((8, 16), "float32", scope="local", data=acc)
            for i2 in range(2):
                for i3, j in T.grid(4, 16):
                    acc_1[i2 * 4 + i3, j] = T.float32(0)
                acc_tile = T.allocate([4, 16], "float32", "local")
                acc_tile_1 = T.decl_buffer((4, 16), "float32", scope="local", data=acc_tile)
                for t0, t1 in T.grid(4, 16):
                    acc_tile_1[t0, t1] = acc_1[i2 * 4 + t0, t1]
                for k in range(16):
                    for i3 in T.unroll(4):
                        for j in T.vectorized(16):
                            acc_tile_1[i3, j] = acc_tile_1[i3, j] + \
                                A[i0 * 8 + i2 * 4 + i3, k] * B[k, j]
                for t0, t1 in T.grid(4, 16):
                    acc_1[i2 * 4 + t0, t1] = acc_tile_1[t0, t1]
            for i, j in T.grid(8, 16):
                C[i0 * 8 + i, j] = acc_1[i, j]


def test_tile_is_hoisted_around_the_reduction_loop():
    assert_structural_equal(HoistAccumulatorTile()(Before), Expected)


def test_hoisted_kernel_computes_the_same():
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (16, 16)).astype("float32") for _ in range(2))
    for target in ("c", "python"):
        c = np.zeros((16, 16), "float32")
        rvm.build(Before, target=target)["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_a_tile_larger_than_the_budget_stays():
    func = Before["main"]
    assert hoist_accumulator_tile(func, tile_bytes=64) is func


@I.ir_module
class Moving:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        acc = T.allocate([16], "float32", "local")
        acc_1 = T.decl_buffer((16,), "float32", scope="local", data=acc)
        for k in range(16):
            acc_1[k] = A[k] * T.float32(2)
        for k in range(16):
            C[k] = acc_1[k]


def test_a_region_moving_with_the_loop_is_left_alone():
    assert HoistAccumulatorTile()(Moving) is Moving
