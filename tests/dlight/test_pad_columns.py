"""The matmul rule on fewer columns than one vector (the 10-wide output layer): the
columns padded to a whole vector (Schedule.pad_columns), Before/After in script form; the
same results as the unscheduled kernel on odd shapes, NN and NT weights, symbolic rows;
the padded weight is a constant of the executable (packed once, at build)."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.dlight import CPUInfo
from rvm.dlight.cpu.matmul import Matmul
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T
from rvm.tir.schedule.schedule import Schedule
from tests.dlight.test_row_tiles import _symbolic_matmul

INFO = CPUInfo(vector_bytes=64, cores=2)


def _prepared(func, info):
    """``func`` after the matmul rule's ``prepare`` step."""
    sch = Schedule(func)
    assert Matmul().prepare(sch, info)
    return sch.mod["main"]
RNG = np.random.default_rng(2610)


@T.prim_func
def narrow(X: T.Buffer((T.int64(6), T.int64(32)), "float32"),
           W: T.Buffer((T.int64(32), T.int64(10)), "float32"),
           Z: T.Buffer((T.int64(6), T.int64(10)), "float32")):
    T.func_attr({"layout_free_buffers": [1]})
    Y = T.alloc_buffer((T.int64(6), T.int64(10)), "float32")
    for i, j, k in T.grid(T.int64(6), T.int64(10), T.int64(32)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(T.int64(6), T.int64(10)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_narrow_columns_are_padded_to_a_vector_before_scheduling():
    # 10 columns of 16 lanes: a zero-padded copy of the constant weight (folded at build),
    # the matmul over 16 columns into a local buffer, the 10 real ones copied out, then the
    # epilogue
    @T.prim_func
    def expected(X: T.Buffer((T.int64(6), T.int64(32)), "float32"),
                 W: T.Buffer((T.int64(32), T.int64(10)), "float32"),
                 Z: T.Buffer((T.int64(6), T.int64(10)), "float32")):
        T.func_attr({"layout_free_buffers": [1]})
        Y = T.alloc_buffer((T.int64(6), T.int64(10)), "float32")
        Y_pad = T.alloc_buffer((T.int64(6), T.int64(16)), "float32", scope="local")
        W_pad = T.alloc_buffer((T.int64(32), T.int64(16)), "float32")
        for k, j in T.grid(T.int64(32), T.int64(16)):
            with T.block("W_pad"):
                vk, vj = T.axis.remap("SS", [k, j])
                T.reads(W[vk, vj])
                T.writes(W_pad[vk, vj])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                W_pad[vk, vj] = T.if_then_else(vj < T.int64(10), W[vk, vj], T.float32(0))
        for i, j, k in T.grid(T.int64(6), T.int64(16), T.int64(32)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y_pad[vi, vj] = T.float32(0)
                Y_pad[vi, vj] = Y_pad[vi, vj] + X[vi, vk] * W_pad[vk, vj]
        for i0, i1 in T.grid(T.int64(6), T.int64(10)):
            with T.block("Y_real"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(Y_pad[v0, v1])
                T.writes(Y[v0, v1])
                T.block_attr({"dlight.pad_copy": 1})
                Y[v0, v1] = Y_pad[v0, v1]
        for i, j in T.grid(T.int64(6), T.int64(10)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    assert_structural_equal(_prepared(narrow, INFO),
                            expected.with_attr("global_symbol", "narrow"))


def test_a_run_time_weight_or_a_vector_of_columns_is_not_padded():
    # padding a weight that is not a constant would copy it at every call
    run_time = narrow.with_attr("layout_free_buffers", [])
    assert "W_pad" not in _prepared(run_time, INFO).script()
    # 8 lanes (AVX2): 10 columns are more than one vector, left to the masked last tile
    assert "W_pad" not in _prepared(narrow, CPUInfo(vector_bytes=32, cores=2)).script()



@T.prim_func
def ranks(X: T.Buffer((T.int64(3), T.int64(4)), "float32"),
          P: T.Buffer((T.int64(4), T.int64(4)), "bool"),
          Z: T.Buffer((T.int64(3), T.int64(4)), "int64")):
    # TopK's rank count: a matmul-shaped reduction that also reads X along the columns
    T.func_attr({"layout_free_buffers": [1]})
    Y = T.alloc_buffer((T.int64(3), T.int64(4)), "int64")
    for i, j, k in T.grid(T.int64(3), T.int64(4), T.int64(4)):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.int64(0)
            Y[vi, vj] = Y[vi, vj] + T.Cast("int64", X[vi, vk] > X[vi, vj] or
                                           X[vi, vk] == X[vi, vj] and P[vk, vj])
    for i, j in T.grid(T.int64(3), T.int64(4)):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj]


def test_a_block_reading_another_buffer_along_the_columns_is_not_padded():
    # padding would read X's columns 4..15, past its end
    sch = Schedule(ranks)
    with pytest.raises(rvm.tir.schedule.ScheduleError, match="reads X along it"):
        sch.pad_columns(sch.get_block("Y"), 1, 16)
    assert "P_pad" not in _prepared(ranks, INFO).script()
    x = RNG.standard_normal((3, 4)).astype("float32")
    p = RNG.random((4, 4)) < 0.5
    z = rvm.nd.empty((3, 4), "int64")
    kernel = rvm.build(rvm.dlight.schedule_func(ranks, rvm.dlight.RULES, INFO), target="c")
    kernel(rvm.nd.array(x), rvm.nd.array(p), z)
    want = ((x[:, None, :] > x[:, :, None]) |
            ((x[:, None, :] == x[:, :, None]) & p.T[None])).sum(-1)
    np.testing.assert_array_equal(z.numpy(), want)

# (name, k, cols, epilogue, constant): primes, one column, a reduction no vector divides;
# NN weights and NT ones (a linear layer's (cols, k) weight)
SHAPES = [
    ("nn_10", 19, 10, True, RNG.standard_normal((19, 10)).astype("float32")),
    ("nn_1", 7, 1, False, RNG.standard_normal((7, 1)).astype("float32")),
    ("nn_13", 128, 13, True, RNG.standard_normal((128, 13)).astype("float32")),
    ("nt_10", 33, 10, True, ("T", RNG.standard_normal((10, 33)).astype("float32"))),
    ("nt_3", 5, 3, False, ("T", RNG.standard_normal((3, 5)).astype("float32"))),
]


@pytest.mark.parametrize("name,k,cols,epilogue,constant", SHAPES, ids=[s[0] for s in SHAPES])
def test_padded_columns_match_the_unscheduled_kernel(name, k, cols, epilogue, constant):
    mod = _symbolic_matmul(k, cols, epilogue, constant)
    ex = relax.build(mod)
    [packed] = [c for c in ex.constants if hasattr(c, "shape") and len(c.shape) == 2]
    assert tuple(packed.shape) == (k, 16)  # padded once, at build: the call copies nothing
    assert np.all(packed.numpy()[:, cols:] == 0)
    tiled = relax.VirtualMachine(ex, rvm.cpu())["main"]
    naive = relax.VirtualMachine(relax.build(mod, default_schedule=False), rvm.cpu())["main"]
    for rows in (1, 7, 9, 450):
        args = [RNG.standard_normal((rows, k)).astype("float32")]
        if epilogue:
            args.append(RNG.standard_normal((cols,)).astype("float32"))
        np.testing.assert_allclose(tiled(*args).numpy(), naive(*args).numpy(), rtol=1e-4,
                                   atol=1e-4)
