"""Cancellation polls of generated kernels (rvm.codegen.c.polls): where they are emitted,
that kernels stay exact with them, and that serial and parallel loops stop at them (a strip counting its iterations)."""
import time

import numpy as np
import pytest

import rvm
from rvm import relax, te
from rvm.codegen.c.polls import STRIP
from rvm.codegen.c.target import render_c
from rvm.script import ir as I, relax as R, tir as T
from rvm.tir.stmt import ForKind
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.kernel_cases import set_loop_kind


def _kernel_body(func):
    return render_c(lower_module(func), True).split("RVM_EXPORT int rvm_kernel_main(")[1]


def _elementwise(shape):
    A = te.placeholder(shape, name="A")
    return te.create_prim_func([A, te.compute(shape, lambda *i: A[i] * 2.0, name="B")])


def test_the_poll_sits_at_the_outer_back_edge_only():
    body = _kernel_body(_elementwise((64, 8)))
    assert body.count("RVM_POLL()") == 1
    outer, inner = body.index("for (int32_t i0 = 0;"), body.index("for (int32_t i1 = 0;")
    assert outer < body.index("RVM_POLL()") < inner  # in the outer body, not the inner loop
    assert "rvm_ctx->polls_left -= rvm_polls;" in body


def test_a_small_innermost_loop_has_no_poll_and_a_kernel_without_loops_no_context():
    assert "RVM_POLL" not in _kernel_body(_elementwise((1000,)))
    assert "RVMBackendGetContext" not in _kernel_body(_elementwise((1000,)))


def test_a_vectorized_inner_loop_keeps_its_pragma_and_has_no_poll():
    body = _kernel_body(set_loop_kind(_elementwise((64, 16)), "i1", ForKind.VECTORIZED))
    simd = body.index("#pragma omp simd")
    assert body.count("RVM_POLL()") == 1 and body.index("RVM_POLL()") < simd


@pytest.mark.parametrize("n", [0, 1, STRIP, 2 * STRIP + 3])
def test_an_innermost_loop_of_unknown_extent_is_strip_mined_and_exact(n):
    m = te.var("n", "int64")
    func = _elementwise((m,))
    body = _kernel_body(func)
    assert "rvm_s_" in body and body.count("RVM_POLL_N(") == 1  # the strip's iterations
    f = rvm.build(func, target="c")["main"]
    a = np.arange(n, dtype="float32")
    b = rvm.nd.array(np.zeros(n, "float32"))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


def test_a_parallel_loop_shares_chunks_out_and_stays_exact():
    func = set_loop_kind(_elementwise((67, 5)), "i0", ForKind.PARALLEL)
    body = _kernel_body(func)
    assert "#pragma omp parallel num_threads(rvm_team_i0) if(rvm_team_i0 > 1) " \
        "reduction(+:rvm_polls)" in body
    assert "rvm_take_chunk(&rvm_next_i0, " in body
    assert "if (RVM_POLL()) break;" in body and "RVM_STOPPED()" in body
    f = rvm.build(func, target="c")["main"]
    a = np.arange(67 * 5, dtype="float32").reshape(67, 5)
    b = rvm.nd.array(np.zeros((67, 5), "float32"))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


@I.ir_module
class Endless:
    @T.prim_func
    def parallel_spin(x: T.handle, y: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i in T.parallel(T.int64(4611686018427387904)):
            for j in range(8):
                Y[j] = X[j] + T.float32(1)

    @T.prim_func
    def flat_spin(x: T.handle, y: T.handle):  # one innermost loop of 2^62 iterations
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        for i in range(T.int64(4611686018427387904)):
            Y[0] = Y[0] + X[0]

    @T.prim_func
    def count_n(x: T.handle, y: T.handle):  # one innermost loop of n iterations
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in range(n):
            Y[i] = X[i] + T.float32(1)

    @R.function
    def counted(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Endless
        with R.dataflow():
            y = R.call_tir(cls.count_n, (x,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(y)
        return y

    @R.function
    def parallel(x: R.Tensor((8,), "float32")):
        cls = Endless
        with R.dataflow():
            y = R.call_tir(cls.parallel_spin, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y

    @R.function
    def flat(x: R.Tensor((8,), "float32")):
        cls = Endless
        with R.dataflow():
            y = R.call_tir(cls.flat_spin, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


@pytest.fixture(scope="module")
def endless():
    return relax.build(Endless, target="c")


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("func", ["parallel", "flat"])
def test_endless_parallel_and_flat_loops_stop_at_the_limits(endless, engine, func):
    x = np.ones(8, "float32")
    vm = relax.VirtualMachine(endless, rvm.cpu(), engine=engine, step_limit=10)
    with pytest.raises(RuntimeError, match="step_limit of 10 steps in kernel '"):
        vm[func](x)
    vm = relax.VirtualMachine(endless, rvm.cpu(), engine=engine, time_limit=0.2)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"time_limit of 0.2 s \(in kernel '"):
        vm[func](x)
    assert time.perf_counter() - start < 1.2


def test_a_long_simd_loop_enclosing_loops_runs_in_polled_strips():
    m = te.var("n", "int64")
    func = set_loop_kind(_elementwise((m, 3)), "i0", ForKind.VECTORIZED)
    body = _kernel_body(func)
    strip, simd = body.index("rvm_s_"), body.index("#pragma omp simd")
    assert strip < body.index("RVM_POLL_N(") < simd  # polled between strips, outside simd
    f = rvm.build(func, target="c")["main"]
    for n in (0, 5, STRIP + 1):
        a = np.arange(n * 3, dtype="float32").reshape(n, 3)
        b = rvm.nd.array(np.zeros((n, 3), "float32"))
        f(rvm.nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), a * 2)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_strip_counts_its_iterations_against_the_step_limit(endless, engine):
    vm = relax.VirtualMachine(endless, rvm.cpu(), engine=engine, step_limit=2)  # 2048 polls
    x = np.arange(2000, dtype="float32")
    np.testing.assert_array_equal(vm["counted"](x).numpy(), x + 1)
    with pytest.raises(RuntimeError, match="step_limit of 2 steps in kernel 'count_n'"):
        vm["counted"](np.arange(3000, dtype="float32"))  # one strip, of 3000 iterations


def test_a_simd_loop_enclosing_loops_is_left_only_by_its_inner_loops():
    func = set_loop_kind(_elementwise((4, 6, 5)), "i0", ForKind.VECTORIZED)
    body = _kernel_body(func)
    simd = body.index("#pragma omp simd")
    assert body.index("if (RVM_POLL()) break;") > simd  # the nested loop's poll breaks
    assert "return RVMBackendKernelStopped" in body[body.index("RVM_STOPPED()"):]
    f = rvm.build(func, target="c")["main"]
    a = np.arange(120, dtype="float32").reshape(4, 6, 5)
    b = rvm.nd.array(np.zeros((4, 6, 5), "float32"))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


def test_a_parallel_loop_inside_a_simd_loop_runs_serially_and_stays_exact():
    func = set_loop_kind(set_loop_kind(_elementwise((4, 6, 5)), "i0", ForKind.VECTORIZED),
                         "i1", ForKind.PARALLEL)
    body = _kernel_body(func)
    simd = body.index("#pragma omp simd")
    assert "omp parallel" not in body[simd:]  # no thread team inside the simd loop
    assert "return" not in body[simd:body.index("RVM_STOPPED()", simd)]  # and no exit
    f = rvm.build(func, target="c")["main"]
    a = np.arange(120, dtype="float32").reshape(4, 6, 5)
    b = rvm.nd.array(np.zeros((4, 6, 5), "float32"))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)


@I.ir_module
class Counted:
    @T.prim_func
    def rows(x: T.handle, y: T.handle):  # 2048 polls: one per row
        X = T.match_buffer(x, (2048, 2), "float32")
        Y = T.match_buffer(y, (2048, 2), "float32")
        for i, j in T.grid(2048, 2):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi, vj] + T.float32(1)

    @R.function
    def main(x: R.Tensor((2048, 2), "float32")):
        cls = Counted
        with R.dataflow():
            y = R.call_tir(cls.rows, (x,), out_sinfo=R.Tensor((2048, 2), "float32"))
            R.output(y)
        return y


@pytest.mark.parametrize("engine", ["native", "python"])
def test_1024_polls_make_a_step_and_each_run_has_its_own_budget(engine):
    ex = relax.build(Counted, target="c")
    x = np.zeros((2048, 2), "float32")
    exact = relax.VirtualMachine(ex, rvm.cpu(), engine=engine, step_limit=2)
    for _ in range(3):  # 2048 polls = 2 steps, in every run
        np.testing.assert_array_equal(exact["main"](x).numpy(), x + 1)
    short = relax.VirtualMachine(ex, rvm.cpu(), engine=engine, step_limit=1)
    with pytest.raises(RuntimeError, match="step_limit of 1 steps in kernel 'rows'"):
        short["main"](x)


def test_a_small_unrolled_tile_has_no_poll_of_its_own_and_stays_exact():
    # i1 unrolled over an inner loop: 4 x 16 iterations, covered by i0's poll
    func = set_loop_kind(_elementwise((64, 4, 16)), "i1", ForKind.UNROLLED)
    body = _kernel_body(func)
    assert body.count("RVM_POLL()") == 1
    assert body.index("RVM_POLL()") < body.index("#pragma GCC unroll 4")
    f = rvm.build(func, target="c")["main"]
    a = np.arange(64 * 4 * 16, dtype="float32").reshape(64, 4, 16)
    b = rvm.nd.array(np.zeros_like(a))
    f(rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)
    # a nest above STRIP iterations under the unrolled loop keeps its poll
    big = set_loop_kind(_elementwise((2, 3, STRIP)), "i1", ForKind.UNROLLED)
    assert _kernel_body(big).count("RVM_POLL()") == 2
