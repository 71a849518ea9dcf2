"""Polls around a register tile (rvm.codegen.c.polls: ``covers_body``, ``strip_body``): the
reduction loop of a tile polls before it or between strips, never per iteration, and the
loops it encloses poll no more; a long reduction still stops at the time and step limits;
results stay exact; every unit starts with the pragma that keeps the tile in registers."""
import re
import time

import numpy as np
import pytest

import rvm
from rvm import relax, te
from rvm.codegen.c.polls import STRIP
from rvm.codegen.c.preamble import NO_UNROLL_AND_JAM
from rvm.codegen.c.target import render_c
from rvm.script import ir as I, relax as R, tir as T
from rvm.tir.stmt import ForKind
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.kernel_cases import set_loop_kind


def _tile(shape):
    """Rows i0 x reduction i1 x vector i2 x unrolled rows i3 (a register tile's loop kinds) of
    an elementwise kernel: the poll placement depends on the loops, not on what they do."""
    A = te.placeholder(shape, name="A")
    func = te.create_prim_func([A, te.compute(shape, lambda *i: A[i] * 2.0, name="B")])
    return set_loop_kind(set_loop_kind(func, "i2", ForKind.VECTORIZED), "i3",
                         ForKind.UNROLLED)


def _source(func):
    return render_c(lower_module(func), True)


def _body(func):
    return _source(func).split("RVM_EXPORT int rvm_kernel_main(")[1]


def _after(body, loop):
    """The text of ``body`` from the C loop over ``loop`` on."""
    return body[re.search(rf"for \(\w+ {loop} = ", body).start():]


def _check(func, shape):
    f = rvm.build(func, target="c")["main"]
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape) % 97
    b = rvm.nd.array(np.zeros(shape, "float32"))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


def test_a_small_tile_is_covered_by_the_poll_of_the_loop_around_it():
    # 128 x 16 x 4 iterations per row tile (at most STRIP): the row loop's poll stands for
    # them, and the reduction loop inside polls neither per iteration nor before it
    shape = (9, 128, 16, 4)
    body = _body(_tile(shape))
    assert body.count("RVM_POLL") == 1
    assert body.index("RVM_POLL()") < body.index("for (int32_t i1 = ")
    _check(_tile(shape), shape)


@pytest.mark.parametrize("k", [STRIP // 64 * 4 + 3])
def test_a_long_reduction_polls_between_strips_not_per_iteration(k):
    # 64 iterations per reduction step, k steps (above STRIP in all): strips of STRIP // 64
    # steps, each polled once counting its steps; nothing inside the reduction loop polls
    shape = (2, k, 16, 4)
    body = _body(_tile(shape))
    assert f"> {STRIP // 64}u ?" in body and "RVM_POLL_N(" in body
    inner = _after(body, "i1")
    assert "RVM_POLL" not in inner.split("rvm_ctx->polls_left")[0]
    assert body.index("RVM_POLL_N(") < body.index("for (int32_t i1 = rvm_s_i1;")
    _check(_tile(shape), shape)


def test_a_symbolic_reduction_runs_in_strips_and_stays_exact():
    n = te.var("n", "int64")
    body = _body(_tile((3, n, 16, 4)))
    assert "rvm_s_i1" in body and "RVM_POLL_N(" in body
    f = rvm.build(_tile((3, n, 16, 4)), target="c")["main"]
    for steps in (0, 1, STRIP // 64 + 5):
        a = np.arange(3 * steps * 64, dtype="float32").reshape(3, steps, 16, 4) % 89
        b = rvm.nd.array(np.zeros_like(a))
        f(rvm.nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), a * 2)


def test_a_matmul_register_tile_has_no_poll_in_its_reduction_loop():
    # the default schedule of a 64 x 512 -> 128 linear layer on a symbolic row count: one
    # poll per row tile and strips over k (512 x 64 x 6 > STRIP), none inside the k loop
    from tests.dlight.test_batch_rows import _batched_linear

    source = relax.build(_batched_linear(512, 128, "NT")).kernel_libs[0].source
    kernel = source[source.index("RVM_EXPORT int rvm_kernel_fused"):]
    loop = re.search(r"for \(int64_t k = rvm_s_k; k < rvm_e_k; \+\+k\) \{", kernel)
    assert loop is not None
    depth, end = 0, loop.end() - 1
    for end in range(loop.end() - 1, len(kernel)):  # the k loop's body, braces matched
        depth += {"{": 1, "}": -1}.get(kernel[end], 0)
        if depth == 0:
            break
    assert "#pragma GCC unroll 6" in kernel[loop.end():end]
    assert "RVM_POLL" not in kernel[loop.end():end]


def test_every_unit_starts_with_the_unroll_and_jam_pragma():
    # without it gcc jams two k steps into the tile's vector loop once no poll leaves the
    # k loop, and the tile's accumulators go to memory
    source = _source(_tile((2, 8, 16, 4)))
    assert source.splitlines()[1] == NO_UNROLL_AND_JAM.strip()
    assert source.index(NO_UNROLL_AND_JAM) < source.index("#include")


@I.ir_module
class LongTile:
    @T.prim_func
    def tile(x: T.handle, y: T.handle):  # a reduction of 2^50 steps of a 16 x 4 tile
        X = T.match_buffer(x, (16, 4), "float32")
        Y = T.match_buffer(y, (16, 4), "float32")
        for i in range(2):
            for k in range(T.int64(1125899906842624)):
                for j in T.vectorized(16):
                    for r in T.unroll(4):
                        Y[j, r] = Y[j, r] + X[j, r]

    @R.function
    def main(x: R.Tensor((16, 4), "float32")):
        cls = LongTile
        with R.dataflow():
            y = R.call_tir(cls.tile, (x,), out_sinfo=R.Tensor((16, 4), "float32"))
            R.output(y)
        return y


@pytest.fixture(scope="module")
def long_tile():
    return relax.build(LongTile, target="c")


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_long_reduction_stops_at_the_time_and_step_limits(long_tile, engine):
    assert "rvm_s_k" in long_tile.kernel_libs[0].source  # polled between strips
    x = np.ones((16, 4), "float32")
    vm = relax.VirtualMachine(long_tile, rvm.cpu(), engine=engine, time_limit=0.2)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"time_limit of 0.2 s \(in kernel 'tile'"):
        vm["main"](x)
    assert time.perf_counter() - start < 1.2
    vm = relax.VirtualMachine(long_tile, rvm.cpu(), engine=engine, step_limit=10)
    with pytest.raises(RuntimeError, match="step_limit of 10 steps in kernel 'tile'"):
        vm["main"](x)


def test_a_tile_whose_inner_loops_run_no_iteration_still_compiles_and_runs():
    # a symbolic row count around loops of extent 0 (an ONNX reduction over an empty axis,
    # expanded): the strip length is counted from a body of one iteration, not divided by 0
    n, m = te.var("n", "int64"), te.var("m", "int64")
    shape = (n, m, 0, 4)
    func = _tile(shape)
    assert "RVM_POLL" in _source(func)
    f = rvm.build(func, target="c")["main"]
    b = rvm.nd.array(np.zeros((5, 3, 0, 4), "float32"))
    f(rvm.nd.array(np.zeros((5, 3, 0, 4), "float32")), b)
    assert b.shape == (5, 3, 0, 4)
