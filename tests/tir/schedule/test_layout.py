"""transform_layout: Before/Expected, numerics (the weight packed to match), illegal uses."""
import numpy as np
import pytest

import rvm
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir import IndexMap
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import Elementwise, Matmul, check_replay, random_args, run


def test_transform_layout_of_a_parameter():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((8, 128, 16), "float32"),
                 C: T.Buffer((128, 128), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i, j, k in T.grid(128, 128, 128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj // 16, vk, vj % 16]

    sch = Schedule(Matmul, debug_mask="all")
    c = sch.get_block("C")
    sch.transform_layout(c, ("read", 1), lambda k, j: (j // 16, k, j % 16))
    rvm.ir.assert_structural_equal(sch.mod, Expected)
    check_replay(sch, Matmul)
    a, b, c_arr = random_args(Matmul["main"])
    packed = np.ascontiguousarray(b.reshape(128, 8, 16).transpose(1, 0, 2))
    want = run(Matmul, [a, b, c_arr])[2]
    got = run(sch.mod, [a, packed, c_arr])[2]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_transform_layout_of_an_intermediate_buffer_by_name():
    sch = Schedule(Elementwise, debug_mask="all")
    sch.transform_layout(sch.get_block("B"), "B", IndexMap.from_func(lambda i, j: (j, i)))
    assert [int(d) for d in sch.get(sch.get_block("B")).writes[0].buffer.shape] == [24, 16]
    check_replay(sch, Elementwise)
    args = random_args(Elementwise["main"])
    for want, got in zip(run(Elementwise, args), run(sch.mod, args)):
        np.testing.assert_allclose(got, want)


def test_transform_layout_rejects_a_map_that_is_not_a_bijection():
    sch = Schedule(Elementwise)
    with pytest.raises(ScheduleError, match="bijection"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, j // 2))
    with pytest.raises(ScheduleError, match="two indices map to one element"):
        sch.transform_layout(sch.get_block("B"), ("write", 0),
                             lambda i, j: (i, (j + j // 12) % 24))


def test_transform_layout_rejects_a_bad_buffer_reference():
    sch = Schedule(Elementwise)
    with pytest.raises(ScheduleError, match='must be \\("read", i\\)'):
        sch.transform_layout(sch.get_block("B"), ("read", 3), lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match="exactly one buffer"):
        sch.transform_layout(sch.get_block("B"), "nope", lambda i, j: (j, i))


def test_transform_layout_rejects_a_wrong_rank():
    sch = Schedule(Elementwise)
    with pytest.raises(ValueError, match="takes 1 indices, expected 2"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i: (i,))


def test_a_symbolic_buffer_takes_a_permutation_of_its_dimensions_and_nothing_else():
    @T.prim_func
    def before(a: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        C = T.match_buffer(c, (n, 4), "float32")
        B = T.alloc_buffer((n, 4))
        for i, j in T.grid(n, T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(n, T.int64(4)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    sch = Schedule(before)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))
    text = sch.mod["main"].script()
    [buffer] = sch.get(sch.get_block("B")).writes
    assert "B[vj, vi]" in text and str(buffer.buffer.shape[1]) == "n"
    with pytest.raises(ScheduleError, match="shape must be constant"):
        sch.transform_layout(sch.get_block("B"), ("write", 0), lambda j, i: (j, i // 2, i % 2))
