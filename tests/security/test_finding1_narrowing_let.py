"""Finding 1: a narrowing let, an address leaked through a cast of a string or of a buffer's
data pointer, and a shell command in an assertion message (the shape of the file that
overwrote a GOT slot with ``system``). Each piece, and the whole file, is refused at load
by the untrusted-TIR verifier on both engines, and the canary command never runs."""
import numpy as np
import pytest

from rvm import relax, tir
from rvm.tir import expr as E
from rvm.tir import stmt as S
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels

X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding1") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


def _i64(v):
    return tir.const(v, "int64")


def _hostile(saved, canary, pieces):
    """The add_one kernel rebuilt from ``pieces`` (a subset of let/string/pointer), under an
    assertion that fails with a shell command in its message."""
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    body = S.BufferStore(Yb, tir.const(1.0, "float32"), [_i64(0)])
    if "let" in pieces:
        # The prover takes t = 128 and proves Y[t - 121] = Y[7] in range; C stores -128 in t.
        t = E.Var("t", "int8")
        body = S.LetStmt(t, _i64(128), S.BufferStore(
            Yb, tir.const(1.0, "float32"), [E.Cast("int64", t) - _i64(121)]))
    leaks = []
    if "string" in pieces:
        leaks.append(E.Cast("int64", E.StringImm("leak")))
    if "pointer" in pieces:
        leaks.append(E.Cast("int64", Xb.data))
    for k, leak in enumerate(leaks):
        body = S.SeqStmt([S.BufferStore(Yb, E.Cast("float32", leak), [_i64(k + 1)]), body])
    command = f"'; touch {canary}; echo '"
    body = S.AssertStmt(E.LT(_i64(1), _i64(0)), E.StringImm(command), body)
    return with_kernels(saved, funcs=[(name, func.with_body(body))])


CASES = {"let": ("let",), "string": ("string",), "pointer": ("pointer",),
         "all": ("let", "string", "pointer")}
RULES = {"let": "let-type: let 't' of dtype int8 is bound to a value of dtype int64",
         "string": "numeric-value: cast from handle to int64",
         "pointer": 'numeric-value: cast from handle to int64: T.Cast("int64", X)',
         "all": "UntrustedTIRError: kernel 'add_one': "}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_at_load_and_the_canary_never_runs(saved, tmp_path, engine, case):
    canary = tmp_path / "CANARY"
    path = tmp_path / "hostile.rvm"
    path.write_bytes(_hostile(saved, canary, CASES[case]))
    result = run_untrusted(path, [X], engine=engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "LOAD-ERROR" in result.stdout and "UntrustedTIRError" in result.stdout
    assert RULES[case] in result.stdout, result.stdout
    assert not canary.exists()
