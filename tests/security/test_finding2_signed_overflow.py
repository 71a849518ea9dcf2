"""Finding 2: an index whose arithmetic overflows must fail its guard, never wrap into (or
past) the buffer. Kernels compiled without -fwrapv let gcc delete the ``i >= 0`` half of a
guard, so ``Y[i * (2**63 - 1)]`` wrote outside Y before reporting IndexError (and crashed
with larger i); a guard computed in wrapping arithmetic also lets ``(-2) * (2**63 - 1)``
land on Y[2]. Guarded indices are now computed with overflow checks, kernels compile with
-fwrapv, and the prover does not prove indices whose intermediates can overflow."""
import numpy as np
import pytest

from rvm import relax, tir
from rvm.driver.build_module import build
from rvm.tir import Var
from rvm.tir.stmt import BufferStore, For, ForKind
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, run_untrusted, with_kernels

# (loop start, loop extent, multiplier, index dtype): every index but i == 0 overflows or
# lies outside Y; the -2 starts wrap (in int64 and in int32) onto Y[2].
CASES = {
    "i_times_int64_max": (0, 8, (1 << 63) - 1, "int64"),
    "larger_i": (1 << 40, 8, (1 << 63) - 1, "int64"),
    "wraps_onto_y2_int64": (-2, 2, (1 << 63) - 1, "int64"),
    "wraps_onto_y2_int32": (-2, 2, (1 << 31) - 1, "int32"),
}


def hostile(start, extent, multiplier, dtype):
    X = tir.decl_buffer((8,), "float32", name="X")
    Y = tir.decl_buffer((8,), "float32", name="Y")
    i = Var("i", dtype)
    index = i * tir.const(multiplier, dtype)
    body = For(i, tir.const(start, dtype), tir.const(extent, dtype), ForKind.SERIAL,
               BufferStore(Y, X[tir.const(0, dtype)] + tir.const(100.0, "float32"), [index]))
    return tir.PrimFunc([X, Y], body).with_attr("global_symbol", "add_one")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding2") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("engine", ENGINES)
def test_overflowing_index_in_a_loaded_file_raises_index_error(saved, tmp_path, case, engine):
    path = tmp_path / "hostile.rvm"
    path.write_bytes(with_kernels(saved, funcs=[("add_one", hostile(*CASES[case]))]))
    result = run_untrusted(path, [np.arange(8, dtype="float32")], engine=engine)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "RUN-ERROR IndexError" in result.stdout
    assert "index of buffer 'Y' is out of bounds" in result.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_nothing_is_written_around_or_inside_y(case):
    lib = build(hostile(*CASES[case]), "c")
    canary = np.full(8 + 2 * 4096, -7.0, "float32")  # Y with 16 KB on each side
    y = canary[4096:4096 + 8]
    with pytest.raises(IndexError, match="add_one: an index of buffer 'Y' is out of bounds"):
        lib["add_one"](np.arange(8, dtype="float32"), y)
    start = CASES[case][0]
    expected = np.full_like(canary, -7.0)
    if start == 0:
        expected[4096] = 100.0  # i == 0 is Y[0], in bounds; nothing else may change
    np.testing.assert_array_equal(canary, expected)
