"""has_reshape_pattern: a kernel that only moves one input's elements to the same row-major
positions of its output, and the near misses that must not count as one."""
import pytest

from rvm import te, topi
from rvm.relax.analysis import has_reshape_pattern
from rvm.relax.analysis.reshape_pattern import reshape_source_param
from rvm.script import tir as T
from rvm.tir.expr import Var

n = Var("n", "int64")
A = te.placeholder((2, 3, 4), name="A")
S = te.placeholder((n, 4), name="S")
U = te.placeholder((1, 6), name="U")


def _func(*tensors):
    return te.create_prim_func(list(tensors))


def _with(placeholder, make):
    return placeholder, make(placeholder)


RESHAPES = {
    "merge": lambda: (A, topi.reshape(A, (6, 4))),
    "split": lambda: (A, topi.reshape(A, (2, 2, 2, 3))),
    "flatten": lambda: (A, topi.reshape(A, (24,))),
    "unit axes": lambda: (U, topi.reshape(U, (1, 1, 6, 1))),
    "to a scalar": lambda: _with(te.placeholder((1, 1), name="P"), lambda P: topi.reshape(P, ())),
    "symbolic": lambda: (S, topi.reshape(S, (n * 2, 2))),
    "symbolic flatten": lambda: (S, topi.reshape(S, (n * 4,))),
}


@pytest.mark.parametrize("name", sorted(RESHAPES))
def test_topi_reshapes_are_recognized(name):
    assert has_reshape_pattern(_func(*RESHAPES[name]()))


NOT_RESHAPES = {
    "transpose": lambda: (A, topi.transpose(A, (0, 2, 1))),
    "add one": lambda: (A, te.compute((2, 3, 4), lambda i, j, k: A[i, j, k] + 1.0)),
    "cast": lambda: (A, topi.cast(A, "float16")),
    "broadcast": lambda: (U, topi.broadcast_to(U, (3, 6))),
    "sum": lambda: (A, topi.sum(A, axis=2)),
    "shifted": lambda: (U, te.compute((1, 5), lambda i, j: U[i, j + 1])),
    # the first 6 of 24 elements, at the same row-major positions: not a view of all of A
    "prefix of a larger tensor": lambda: (A, te.compute(
        (2, 3), lambda i, j: A[(i * 3 + j) // 12, (i * 3 + j) // 4 % 3, (i * 3 + j) % 4])),
    "reversed": lambda: (U, te.compute((6,), lambda i: U[0, 5 - i])),
}


@pytest.mark.parametrize("name", sorted(NOT_RESHAPES))
def test_kernels_that_do_more_than_move_elements_are_not_reshapes(name):
    assert not has_reshape_pattern(_func(*NOT_RESHAPES[name]()))


def test_the_source_is_the_buffer_read():
    """A fused tuple input flattened into several buffers: only one is read."""
    B = te.placeholder((4, 6), name="B")
    out = topi.reshape(B, (24,))
    func = _func(A, B, out)
    assert reshape_source_param(func) == 1


@T.prim_func
def writes_twice(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("y"):
            vi = T.axis.spatial(4, i)
            y[vi] = x[vi]
    for i in range(4):
        with T.block("z"):
            vi = T.axis.spatial(4, i)
            y[vi] = x[vi] * T.float32(2)


@T.prim_func
def half_the_output(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("y"):
            vi = T.axis.spatial(4, i)
            y[vi] = x[vi]


@T.prim_func
def swapped_store(x: T.Buffer((4, 4), "float32"), y: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("y"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vj, vi] = x[vi, vj]


@T.prim_func
def with_assert(x: T.Buffer((4, 4), "float32"), y: T.Buffer((16,), "float32")):
    assert T.int64(1) == T.int64(1), "checked"
    for i in range(16):
        with T.block("y"):
            vi = T.axis.spatial(16, i)
            y[vi] = x[vi // 4, vi % 4]


@T.prim_func
def guarded(x: T.Buffer((4, 4), "float32"), y: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("y"):
            vi = T.axis.spatial(16, i)
            T.where(i < 8)
            y[vi] = x[vi // 4, vi % 4]


@T.prim_func
def plain_copy(x: T.Buffer((4, 4), "float32"), y: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("y"):
            vi = T.axis.spatial(16, i)
            y[vi] = x[vi // 4, vi % 4]


@pytest.mark.parametrize("func", [writes_twice, half_the_output, swapped_store, with_assert,
                                  guarded], ids=lambda f: f.attrs.get("global_symbol", "f"))
def test_hand_written_near_misses(func):
    assert not has_reshape_pattern(func)


def test_a_hand_written_reshape():
    assert has_reshape_pattern(plain_copy)
