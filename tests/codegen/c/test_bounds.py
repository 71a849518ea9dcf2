"""Generated kernels prove their buffer accesses in bounds, or guard them."""
import re

import numpy as np
import pytest

import rvm
from rvm import tir
from rvm.codegen.c.bounds import BoundsProver
from rvm.codegen.c.source import render_c_source
from rvm.codegen.c.kernel_signature import kernel_functions
from rvm.driver.build_module import build
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.tir import Var
from rvm.tir.stmt import BufferStore, For, ForKind
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.kernel_cases import CASES


def _guards(source):
    return len(re.findall(r"rvm_i >= 0", source))


@pytest.mark.parametrize("name", sorted(CASES))
def test_test_kernels_are_proven(name):
    mod = lower_module(IRModule({GlobalVar(name): CASES[name][0]()}))
    source = render_c_source(kernel_functions(mod), False)
    # topi_reshape_symbolic's x[floormod(i // 16, n) * 16 + i % 16] too: Simplify folds the
    # modulus by the variable (i // 16 < n from the loop's range) before the proof.
    assert _guards(source) == 0


def _shifted(offset, n=8):
    X = tir.decl_buffer((n,), "float32", name="X")
    Y = tir.decl_buffer((n,), "float32", name="Y")
    i = Var("i", "int32")
    body = For(i, 0, n, ForKind.SERIAL, BufferStore(Y, X[i], [i + offset]))
    return tir.PrimFunc([X, Y], body).with_attr("global_symbol", "shift")


def test_an_index_past_the_end_is_guarded_and_reported():
    assert _guards(render_c_source(kernel_functions(lower_module(
        IRModule({GlobalVar("shift"): _shifted(0)}))), False)) == 0
    lib = build(_shifted(1), "c")
    x, y = np.arange(8, dtype="float32"), np.zeros(9, "float32")
    with pytest.raises(IndexError, match="shift: an index of buffer 'Y' is out of bounds"):
        lib["shift"](x, y[:8])
    np.testing.assert_array_equal(y, [0, 0, 1, 2, 3, 4, 5, 6, 0])  # y[8] never written


def _prover(*shape_vars):
    return BoundsProver(shape_vars, [])


def test_prover_facts():
    i, n, m, j = Var("i", "int64"), Var("n", "int64"), Var("m", "int64"), Var("j", "int64")
    p = _prover(n, m)
    p.push_loop(i, tir.const(0, "int64"), n)
    p.push_loop(j, tir.const(0, "int64"), m)
    assert p.proves(i * m + j, [n, m])
    assert not p.proves(i * m + j + 1, [n, m])
    assert not p.proves(i * m + j, [n])
    p.push_fact(i * m + j + 1 < n * m)
    assert p.proves(i * m + j + 1, [n, m])
    p.pop()
    k = Var("k", "int64")
    p.push_loop(k, tir.const(0, "int64"), tir.const(16, "int64"))
    assert p.proves(tir.floordiv(k, 4), [4]) and not p.proves(tir.floordiv(k, 4), [3])
    assert p.proves(tir.floormod(i * m + j, 4), [4])
    p.pop()
    assert not p.proves(i - 1, [n])
    p.push_fact(i >= 1)
    assert p.proves(i - 1, [n])


def test_int32_indices_are_checked_to_fit_on_entry():
    i, n = Var("i", "int32"), Var("n", "int32")
    p = _prover(n)
    p.push_loop(i, tir.const(0, "int32"), n * 2)
    assert p.proves(i, [n, 2])
    # n * 2 must not wrap in int32: the kernel checks it on entry.
    assert any(hi == (1 << 31) - 1 and poly for poly, _, hi in p.requirements.values())
    k = Var("k", "int32")
    p.push_loop(k, tir.const(0, "int32"), tir.const(16, "int32"))
    assert p.proves(k, [16]) and not p.proves(k, [15])


def test_symbolic_proofs_record_entry_checks():
    i, n = Var("i", "int64"), Var("n", "int64")
    p = _prover(n)
    p.push_loop(i, tir.const(0, "int64"), n * 3)
    assert p.proves(i, [n, 3])
    assert any(hi == (1 << 63) - 1 for _, _, hi in p.requirements.values())


def test_tiles_of_a_symbolic_count_and_their_remainder_are_proven():
    # for i0 in range(n // 6): for i1 in range(6): ... row i0 * 6 + i1, then
    # for t in range(n // 6 * 6, n): ... row t (the two copies of n // 6 are separate nodes,
    # as a pass leaves them: one atom, so the remainder's end is n)
    n, i0, i1, t = (Var(name, "int64") for name in ("n", "i0", "i1", "t"))
    six = tir.const(6, "int64")
    p = _prover(n)
    p.push_loop(i0, tir.const(0, "int64"), tir.floordiv(n, six))
    p.push_loop(i1, tir.const(0, "int64"), six)
    assert p.proves(i0 * 6 + i1, [n])
    assert not p.proves(i0 * 6 + i1 + 1, [n])
    p.pop()
    p.pop()
    start = tir.floordiv(n, six) * six
    p.push_loop(t, start, n - tir.floordiv(n, six) * six)
    assert p.proves(t, [n])
    assert not p.proves(t + 1, [n])
    p.pop()
    # a remainder whose start is another quotient is not mistaken for one
    p.push_loop(t, tir.floordiv(n, tir.const(5, "int64")) * six,
                n - tir.floordiv(n, six) * six)
    assert not p.proves(t, [n])


def test_floordiv_of_a_multiple_of_the_divisor_is_exact():
    """``for f in [0, n * 64): x[(f // 64) * 100 + r]`` (a fused batch loop) is in bounds of
    ``n * 100``: ``f // 64 <= n - 1``, not ``n - 1/64``."""
    f, n, r = Var("f", "int64"), Var("n", "int64"), Var("r", "int64")
    p = _prover(n)
    p.push_loop(f, tir.const(0, "int64"), n * 64)
    p.push_loop(r, tir.const(0, "int64"), tir.const(100, "int64"))
    assert p.proves(tir.floordiv(f, 64) * 100 + r, [n, 100])
    assert not p.proves(tir.floordiv(f, 64) * 100 + r + 1, [n, 100])
    assert not p.proves(tir.floordiv(f, 32) * 100 + r, [n, 100])
    p.pop()
    p.pop()
    p.push_loop(f, tir.const(0, "int64"), n * 64 + 63)  # up to n * 64 + 62: f // 64 <= n
    assert not p.proves(tir.floordiv(f, 64), [n])
    assert p.proves(tir.floordiv(f, 64), [n + 1])


def test_tiles_of_a_product_of_scalar_parameters_are_proven():
    # A dimension s70 * s72 (batch times sequence flattened by a reshape; the two are scalar
    # parameters, of no known sign) is a non-negative monomial once the entry checks
    # 0 <= s70 * s72 <= INT64_MAX: the tiles of s70 * s72 // 6 rows are then proven as
    # those of a shape variable are
    a, b, i0, i1 = (Var(name, "int64") for name in ("a", "b", "i0", "i1"))
    six = tir.const(6, "int64")
    for dims, proven in (([a * b], True), ([], False)):
        p = BoundsProver([], [a, b], dims)
        p.push_loop(i0, tir.const(0, "int64"), tir.floordiv(a * b, six))
        p.push_loop(i1, tir.const(0, "int64"), six)
        assert p.proves(i0 * 768 + i1 * 128 + 127, [a * b, 128]) == proven
        assert not p.proves(i0 * 768 + i1 * 128 + 128, [a * b, 128])
        if proven:
            assert any(lo == 0 and hi == (1 << 63) - 1 and len(poly) == 1
                       and len(next(iter(poly))) == 2
                       for poly, lo, hi in p.requirements.values())
    # a sum or a product with a constant or a non-symbol is no such monomial
    assert not BoundsProver([], [a, b], [a * b + 1]).products
    assert not BoundsProver([], [a, b], [a * 2]).products


def _rows_of_product():
    """Rows a * b in tiles of 3 and a remainder, as the matmul rule partitions them."""
    from rvm.script import tir as T

    @T.prim_func
    def rows(x: T.handle, z: T.handle, a: T.int64, b: T.int64):
        X = T.match_buffer(x, (a * b, T.int64(8)), "float32")
        Z = T.match_buffer(z, (a * b, T.int64(8)), "float32")
        for i0, i1, j in T.grid(a * b // T.int64(3), T.int64(3), T.int64(8)):
            with T.block("Z"):
                vi = T.axis.spatial(a * b, i0 * T.int64(3) + i1)
                vj = T.axis.spatial(T.int64(8), j)
                Z[vi, vj] = X[vi, vj] * T.float32(2)
        for t in T.serial(a * b // T.int64(3) * T.int64(3), a * b):
            for j in range(T.int64(8)):
                with T.block("Z_tail"):
                    vi = T.axis.spatial(a * b, t)
                    vj = T.axis.spatial(T.int64(8), j)
                    Z[vi, vj] = X[vi, vj] * T.float32(2)

    return rows.with_attr("global_symbol", "rows")


def test_a_kernel_over_a_product_dimension_guards_nothing_and_checks_its_scalars():
    func = _rows_of_product()
    source = render_c_source(kernel_functions(lower_module(IRModule({GlobalVar("rows"): func}))),
                             False)
    assert _guards(source) == 0
    lib = build(func, "c")
    x = np.arange(7 * 8, dtype="float32").reshape(7 * 8 // 8, 8)[:7]
    for a, b in ((7, 1), (1, 7)):
        z = np.zeros((7, 8), "float32")
        lib["rows"](x, z, a, b)
        np.testing.assert_array_equal(z, x * 2)
    with pytest.raises(ValueError, match="rows"):
        lib["rows"](x, np.zeros((7, 8), "float32"), -7, 1)  # not the dimension
    with pytest.raises(ValueError, match="rows: parameter 'a' is a size, expected >= 0, "
                                         "got -7"):
        # the product is the dimension, but its factors are sizes too (Simplify divides by
        # them): rejected on entry
        lib["rows"](x, np.zeros((7, 8), "float32"), -7, -1)
    with pytest.raises(ValueError, match="overflow"):
        # 2**62 * 4 wraps to 0 in C: rejected on entry, not read as a 0-row tensor
        empty = rvm.nd.empty((0, 8), "float32")
        lib["rows"](empty, rvm.nd.empty((0, 8), "float32"), 1 << 62, 4)


def test_a_condition_on_one_loop_variable_narrows_its_range_inside_the_branch():
    # a pad's ``i >= 1``: every index using i, with any coefficient, is bounded by it
    n, i, j = Var("n", "int64"), Var("i", "int64"), Var("j", "int64")
    p = _prover(n)
    p.push_loop(i, tir.const(0, "int64"), tir.const(9, "int64"))
    p.push_loop(j, tir.const(0, "int64"), tir.const(9, "int64"))
    assert not p.proves((i - 1) * 8 + (j - 1), [64])
    p.push_fact(tir.all(i >= 1, j >= 1))
    assert p.proves((i - 1) * 8 + (j - 1), [64])
    assert not p.proves((i - 2) * 8 + (j - 1), [64])  # i = 1 still reaches below 0
    p.pop()
    assert not p.proves((i - 1) * 8 + (j - 1), [64])  # the range is restored on leaving
    # the else branch: i < 1, so i - 1 is negative there
    p.push_fact(i >= 1, holds=False)
    assert not p.proves(i - 1, [64]) and p.proves(i, [1])
    p.pop()
    # a coefficient rounds towards the inside: 2 i >= 3 means i >= 2; 3 i <= 10 means i <= 3
    p.push_fact(i * 2 >= 3)
    assert p.proves(i - 2, [7]) and not p.proves(i - 3, [7])
    p.pop()
    p.push_fact(i * 3 <= 10)
    assert p.proves(i + 4, [8]) and not p.proves(i + 5, [8])
    p.pop()
    # a condition on two variables, or on a loop of symbolic range, narrows nothing
    k = Var("k", "int64")
    p.push_loop(k, tir.const(0, "int64"), n)
    p.push_fact(tir.all(i + j >= 2, k >= 1))
    assert not p.proves((i - 1) * 8 + (j - 1), [64])
    assert p.proves(k - 1, [n])  # the whole fact still proves the index it is
    p.pop()


def _padded_read(low):
    """Y[i, j] = X[i - 1, j - 1] if i >= low and j >= 1 else 0, for i, j < 9, X 8 x 8 (a
    pad: the flat index (i - 1) * 8 + j - 1 is in bounds only with both conditions)."""
    X = tir.decl_buffer((8, 8), "float32", name="X")
    Y = tir.decl_buffer((9, 9), "float32", name="Y")
    i, j = Var("i", "int32"), Var("j", "int32")
    value = tir.if_then_else(tir.all(i >= low, j >= 1), X[i - 1, j - 1],
                             tir.const(0, "float32"))
    body = For(i, 0, 9, ForKind.SERIAL,
               For(j, 0, 9, ForKind.SERIAL, BufferStore(Y, value, [i, j])))
    return tir.PrimFunc([X, Y], body).with_attr("global_symbol", "padded")


def test_a_pad_read_under_its_condition_is_proven_and_a_looser_one_stays_guarded():
    assert _guards(render_c_source(kernel_functions(lower_module(
        IRModule({GlobalVar("padded"): _padded_read(1)}))), False)) == 0
    lib = build(_padded_read(0), "c")  # i = 0 reads X[-1, ..]: guarded, reported, not read
    x = np.arange(64, dtype="float32").reshape(8, 8)
    with pytest.raises(IndexError, match="padded: an index of buffer 'X' is out of bounds"):
        lib["padded"](x, np.zeros((9, 9), "float32"))
    y = np.zeros((9, 9), "float32")
    build(_padded_read(1), "c")["padded"](x, y)
    np.testing.assert_array_equal(y, np.pad(x, ((1, 0), (1, 0))))


def _reshape_of_flattened_rows():
    """GPT-2's GELU input, (s70 * s72, 512) read as (s72, s70, 512): the rows are a product
    of scalar parameters, and the index divides by them."""
    from rvm.script import tir as T

    @T.prim_func
    def gelu_rows(a: T.handle, b: T.handle, s72: T.int64, s70: T.int64):
        A = T.match_buffer(a, (s70 * s72, T.int64(512)))
        B = T.match_buffer(b, (s72 * s70, T.int64(512)))
        R = T.alloc_buffer((s72, s70, T.int64(512)))
        for ax0, ax1, ax2 in T.grid(s72, s70, T.int64(512)):
            with T.block("R"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                R[v0, v1, v2] = A[((v0 * s70 + v1) * T.int64(512) + v2) // T.int64(512)
                                  % (s70 * s72), ((v0 * s70 + v1) * T.int64(512) + v2)
                                  % T.int64(512)]
        for ax0, ax1 in T.grid(s72 * s70, T.int64(512)):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = T.tanh(R[(v0 * T.int64(512) + v1) // T.int64(512) // s70 % s72,
                                     (v0 * T.int64(512) + v1) // T.int64(512) % s70,
                                     (v0 * T.int64(512) + v1) % T.int64(512)])

    return gelu_rows.with_attr("global_symbol", "gelu_rows")


def test_a_default_scheduled_reshape_over_symbolic_rows_is_proven_and_computes_the_same():
    from rvm.dlight import CPUInfo, RULES, schedule_func

    func = schedule_func(_reshape_of_flattened_rows(), RULES, CPUInfo(64, 2))
    source = render_c_source(
        kernel_functions(lower_module(IRModule({GlobalVar("gelu_rows"): func}))), False)
    assert _guards(source) == 0
    x = np.random.default_rng(0).standard_normal((15, 512)).astype("float32")
    for target in ("c", "python"):
        lib = build(func, target)
        z = np.zeros((15, 512), "float32")
        lib["gelu_rows"](x, z, 3, 5)
        np.testing.assert_allclose(z, np.tanh(x), rtol=1e-5, atol=1e-6)
    for target in ("c", "python"):  # factors of a dimension: sizes, checked on entry
        with pytest.raises(ValueError, match="gelu_rows: parameter 's72' is a size, expected "
                                             ">= 0, got -3"):
            build(func, target)["gelu_rows"](x, np.zeros((15, 512), "float32"), -3, -5)


def _gather(clamped):
    from rvm.script import tir as T

    @T.prim_func
    def gather(t: T.Buffer((T.int64(10), T.int64(4)), "float32"),
               ids: T.Buffer((T.int64(6),), "int64"),
               out: T.Buffer((T.int64(6), T.int64(4)), "float32")):
        for i, j in T.grid(T.int64(6), T.int64(4)):
            with T.block("g"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = t[T.max(T.min(T.Select(ids[vi] < T.int64(0), ids[vi] + T.int64(10),
                                                     ids[vi]), T.int64(9)), T.int64(0)), vj]

    @T.prim_func
    def gather_raw(t: T.Buffer((T.int64(10), T.int64(4)), "float32"),
                   ids: T.Buffer((T.int64(6),), "int64"),
                   out: T.Buffer((T.int64(6), T.int64(4)), "float32")):
        for i, j in T.grid(T.int64(6), T.int64(4)):
            with T.block("g"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = t[T.Select(ids[vi] < T.int64(0), ids[vi] + T.int64(10), ids[vi]),
                                vj]

    return (gather if clamped else gather_raw).with_attr("global_symbol", "gather")


def test_a_take_clamped_by_min_and_max_is_proven_whatever_the_loaded_index():
    # (an embedding lookup: the loaded index is opaque, but the clamp bounds it)
    table = np.arange(40, dtype="float32").reshape(10, 4)
    ids = np.array([0, 3, -1, -20, 9, 1 << 40], "int64")
    want = table[[0, 3, 9, 0, 9, 9]]
    for clamped, guards in ((True, 0), (False, 1)):
        func = _gather(clamped)
        source = render_c_source(
            kernel_functions(lower_module(IRModule({GlobalVar("gather"): func}))), False)
        assert _guards(source) == guards
        lib = build(func, "c")
        out = np.zeros((6, 4), "float32")
        if clamped:
            lib["gather"](table, ids, out)
            np.testing.assert_array_equal(out, want)
        else:  # the same hostile indices without the clamp: refused, never read
            with pytest.raises(IndexError, match="gather: an index of buffer 't'"):
                lib["gather"](table, ids, out)


def _merge_heads_into_rows():
    from rvm.script import tir as T

    @T.prim_func
    def heads(a: T.handle, b: T.handle):
        n, s = T.int64(), T.int64()
        A = T.match_buffer(a, (n, T.int64(4), s, T.int64(32)))
        B = T.match_buffer(b, (n * s, T.int64(128)))
        for r, k in T.grid(n * s, T.int64(128)):
            with T.block("B"):
                vr, vk = T.axis.remap("SS", [r, k])
                B[vr, vk] = A[vr // s, vk // T.int64(32), vr % s, vk % T.int64(32)]

    return heads.with_attr("global_symbol", "heads")


def test_a_division_by_a_size_a_loop_runs_over_is_proven():
    # GPT-2's heads merged into rows of batch * sequence: the row index divides by the
    # sequence, which the loop over n * s makes at least 1 wherever the division runs
    from rvm.dlight import CPUInfo, RULES, schedule_func

    func = schedule_func(_merge_heads_into_rows(), RULES, CPUInfo(64, 2))
    source = render_c_source(
        kernel_functions(lower_module(IRModule({GlobalVar("heads"): func}))), False)
    assert _guards(source) == 0
    rng = np.random.default_rng(0)
    for n, s in ((3, 5), (1, 7), (2, 0), (0, 3)):
        x = rng.standard_normal((n, 4, s, 32)).astype("float32")
        want = x.transpose(0, 2, 1, 3).reshape(n * s, 128)
        for target in ("c", "python"):
            out = np.zeros((n * s, 128), "float32")
            build(func, target)["heads"](x, out)
            np.testing.assert_array_equal(out, want)


def test_a_division_by_a_size_no_loop_runs_over_stays_guarded():
    # x[i % s] in a loop over n: s may be 0 (i % 0 is 0 in C), and x then has no element 0
    from rvm.script import tir as T

    @T.prim_func
    def wrap(x: T.handle, y: T.handle):
        n, s = T.int64(), T.int64()
        X = T.match_buffer(x, (s,))
        Y = T.match_buffer(y, (n,))
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi % s]

    func = wrap.with_attr("global_symbol", "wrap")
    source = render_c_source(
        kernel_functions(lower_module(IRModule({GlobalVar("wrap"): func}))), False)
    assert _guards(source) == 1
    lib = build(func, "c")
    y = np.zeros(4, "float32")
    lib["wrap"](np.arange(3, dtype="float32"), y)
    np.testing.assert_array_equal(y, [0, 1, 2, 0])
    with pytest.raises(IndexError, match="wrap: an index of buffer 'X'"):
        lib["wrap"](np.zeros(0, "float32"), y)


def test_a_loaded_offset_added_to_a_loop_variable_is_guarded_not_refused_on_entry():
    # CenterCropPad's window: x[clamp(i + offset[0])] over a symbolic row count. The loaded
    # offset may be anything of its type, so the sum is not provable; the access is guarded,
    # and no entry requirement on the sizes (i + INT64_MAX cannot overflow) refuses the call
    from rvm.script import tir as T

    @T.prim_func
    def window(x: T.Buffer((T.int64(8),), "float32"), off: T.Buffer((T.int64(1),), "int64"),
               y_h: T.handle, n: T.int64):
        Y = T.match_buffer(y_h, (n,))
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = x[T.max(T.min(vi + off[0], T.int64(7)), T.int64(0))]

    func = window.with_attr("global_symbol", "window")
    lib = build(func, "c")
    x = np.arange(8, dtype="float32")
    for n, off in ((5, 3), (3, -9), (9, 1 << 40), (4, -(1 << 40))):
        y = np.zeros(n, "float32")
        lib["window"](x, np.array([off], "int64"), y, n)
        np.testing.assert_array_equal(y, x[np.clip(np.arange(n) + off, 0, 7)])
