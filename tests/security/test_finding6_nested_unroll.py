"""Finding 6 (the TIR side): four nested unrolled loops of 64 made the C compiler copy the
body 64^4 times (cc1 grew to 5.3 GB). Untrusted kernels may unroll a constant extent of at
most MAX_UNROLL_EXTENT, and the unrolled loops around any statement at most
MAX_UNROLL_PRODUCT copies together; beyond that the file is refused at load."""
import numpy as np
import pytest

from rvm import relax, tir
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.analysis.verify_untrusted import MAX_UNROLL_PRODUCT
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels

X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding6") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


def _nested_unrolls(saved, extents):
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    zero = tir.const(0, "int64")
    body = S.BufferStore(Yb, E.BufferLoad(Yb, [zero]) + E.BufferLoad(Xb, [zero]), [zero])
    for n, extent in enumerate(extents):
        body = S.For(E.Var(f"u{n}", "int64"), zero, tir.const(extent, "int64"),
                     S.ForKind.UNROLLED, body)
    init = S.BufferStore(Yb, tir.const(0.0, "float32"), [zero])
    return with_kernels(saved, funcs=[(name, func.with_body(S.SeqStmt([init, body])))])


@pytest.mark.parametrize("engine", ENGINES)
def test_four_nested_unrolls_of_64_are_refused_at_load(saved, tmp_path, engine):
    path = tmp_path / "unroll.rvm"
    path.write_bytes(_nested_unrolls(saved, [64, 64, 64, 64]))
    result = run_untrusted(path, [X], engine=engine, timeout=60)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "UntrustedTIRError: kernel 'add_one': unroll: " in result.stdout
    assert "4096 copies" in result.stdout and str(MAX_UNROLL_PRODUCT) in result.stdout


def test_unrolls_within_the_cap_load_and_run(saved, tmp_path):
    path = tmp_path / "unroll_ok.rvm"
    path.write_bytes(_nested_unrolls(saved, [4, 8, 2]))
    result = run_untrusted(path, [X + 1], engine="native")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RAN [64.0," in result.stdout     # Y[0] = 64 * X[0]
