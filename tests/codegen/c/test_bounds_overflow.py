"""The bounds prover models each operation's dtype: an index whose intermediates, lets,
casts or loop bounds can leave their dtype's range is not proven (its access is guarded),
while the kernels rvm generates stay proven."""
import numpy as np
import pytest

from rvm import te, tir
from rvm.codegen.c.bounds import BoundsProver
from rvm.codegen.c.source import render_c_source
from rvm.codegen.c.kernel_signature import kernel_functions
from rvm.driver.build_module import build
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.tir import Var
from rvm.tir.schedule import Schedule
from rvm.tir.stmt import BufferStore, For, ForKind, LetStmt
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.c.test_bounds import _guards


def _c(dtype, v):
    return tir.const(v, dtype)


def _loop(p, var, start, extent):
    p.push_loop(var, _c(var.dtype, start), _c(var.dtype, extent))


@pytest.mark.parametrize("dtype,bits", [("int32", 32), ("int64", 64)])
def test_products_of_large_loop_extents_are_not_proven(dtype, bits):
    i, j = Var("i", dtype), Var("j", dtype)
    p = BoundsProver([], [])
    big = 1 << (bits // 2 + 1)
    _loop(p, i, 0, big)
    _loop(p, j, 0, big)
    # Exactly j in wrapping arithmetic, but i * j overflows on the way.
    assert not p.proves(i * j - i * j + j, [big])
    assert p.proves(j, [big])
    small = Var("k", dtype)
    _loop(p, small, 0, 1 << (bits // 2 - 2))
    assert p.proves(small * small - small * small + small, [1 << bits // 2])


@pytest.mark.parametrize("dtype,bits", [("int32", 32), ("int64", 64)])
def test_sums_and_constant_products_that_can_overflow_are_not_proven(dtype, bits):
    i = Var("i", dtype)
    p = BoundsProver([], [])
    _loop(p, i, 0, 8)
    top = (1 << (bits - 1)) - 1
    assert not p.proves(i * _c(dtype, top) - i * _c(dtype, top), [8])
    assert not p.proves(i + _c(dtype, top) - _c(dtype, top), [8])
    assert p.proves(i + _c(dtype, top - 8) - _c(dtype, top - 8), [8])


def test_an_int32_constant_out_of_range_is_not_proven():
    i = Var("i", "int32")
    p = BoundsProver([], [])
    _loop(p, i, 0, 8)
    assert not p.proves(i + _c("int32", 1 << 40) - _c("int32", 1 << 40), [8])


def test_narrowing_lets_hold_the_truncated_value():
    i, t = Var("i", "int64"), Var("t", "int8")
    p = BoundsProver([], [])
    _loop(p, i, 0, 300)
    p.push_let(t, i)  # C: const int8_t t = i; 200 becomes -56
    assert not p.proves(t, [300])
    p.pop()
    p.pop()
    _loop(p, i, 0, 100)
    p.push_let(t, i)
    assert p.proves(t, [100]) and not p.proves(t, [99])


def test_narrowing_casts_are_not_proven_unless_the_value_fits():
    i = Var("i", "int64")
    p = BoundsProver([], [])
    _loop(p, i, 0, 300)
    assert not p.proves(tir.Cast("int8", i), [300])
    assert not p.proves(tir.Cast("uint8", i - 1), [300])
    assert p.proves(tir.Cast("int16", i), [300])


def test_a_loop_whose_end_overflows_gives_its_variable_no_range():
    i = Var("i", "int32")
    p = BoundsProver([], [])
    _loop(p, i, (1 << 31) - 4, 8)  # start + extent wraps: C runs no iteration, or many
    assert not p.proves(i - _c("int32", (1 << 31) - 4), [8])


def test_symbolic_products_are_checked_on_entry():
    n, i, j = Var("n", "int64"), Var("i", "int64"), Var("j", "int64")
    p = BoundsProver([n], [])
    p.push_loop(i, _c("int64", 0), n)
    p.push_loop(j, _c("int64", 0), n)
    assert p.proves(i * n + j, [n, n])
    # The intermediate i * n needs (n - 1) * n in int64: a requirement checked on entry.
    assert any(hi == (1 << 63) - 1 and len(poly) > 1
               for poly, _, hi in p.requirements.values())


def _narrow_let_kernel(extent):
    X = tir.decl_buffer((8,), "float32", name="X")
    Y = tir.decl_buffer((256,), "float32", name="Y")
    i, t = Var("i", "int64"), Var("t", "int8")
    body = For(i, _c("int64", 0), _c("int64", extent), ForKind.SERIAL,
               LetStmt(t, i, BufferStore(Y, X[_c("int64", 0)], [tir.Cast("int64", t)])))
    return tir.PrimFunc([X, Y], body).with_attr("global_symbol", "narrow")


def test_a_narrowing_let_index_is_guarded_and_writes_nothing_outside():
    assert _guards(render_c_source(kernel_functions(lower_module(
        IRModule({GlobalVar("narrow"): _narrow_let_kernel(100)}))), False)) == 0
    lib = build(_narrow_let_kernel(200), "c")
    canary = np.full(256 + 2 * 1024, -1.0, "float32")
    with pytest.raises(IndexError, match="narrow: an index of buffer 'Y' is out of bounds"):
        lib["narrow"](np.full(8, 5.0, "float32"), canary[1024:1024 + 256])
    assert (canary[:1024] == -1).all() and (canary[1024 + 256:] == -1).all()


def _tuned_matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([A, B, C]))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 64])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch.mod["main"]


def test_tuned_and_symbolic_kernels_stay_proven():
    n, m = Var("n", "int64"), Var("m", "int64")
    X = te.placeholder((n, m), name="X")
    k = te.reduce_axis((0, m), name="k")
    rows = te.compute((n,), lambda i: te.sum(X[i, k] * X[i, k], axis=k), name="R")
    for name, func in [("tuned", _tuned_matmul(512)),
                       ("symbolic", te.create_prim_func([X, rows]))]:
        mod = lower_module(IRModule({GlobalVar(name): func.with_attr("global_symbol", name)}))
        assert _guards(render_c_source(kernel_functions(mod), False)) == 0, name


def test_a_let_reading_its_own_variable_is_not_analysed():
    i, t = Var("i", "int64"), Var("t", "int64")
    p = BoundsProver([], [])
    _loop(p, i, 0, 8)
    p.push_let(t, i)
    p.push_let(t, tir.floordiv(t, 2))  # C: the inner t's initializer reads the inner t
    assert not p.proves(t, [8])
    p.pop()
    p.push_let(t, t + 1)
    assert not p.proves(t, [9])
