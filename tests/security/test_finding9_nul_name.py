"""Finding 9: a NUL in a buffer name became ``%d`` in the printf format of the arity error,
which then printed stack words. Names with NUL or other non-printable characters are refused
at deserialization (both engines); and, as a second wall, generated C never puts a name in
a format string, so a printable name full of ``%`` is printed as it is."""
import numpy as np
import pytest

from rvm import relax
from rvm.codegen.c.target import regenerate_c
from rvm.runtime.compiler import default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.tir import expr as E
from rvm.tir.serialize import TIRFormatError, load_prim_funcs, save_prim_funcs
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels

X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding9") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


def _renamed(saved, buffer_name=None, var_name=None, kernel_name=None):
    (name, func), = kernel_tir(saved)
    y = func.params[1]
    buf = func.buffer_map[y]
    if buffer_name is not None:
        buf.name = buffer_name          # the codegen reads names from the nodes
    if var_name is not None:
        func.params[0].name_hint = var_name
    return [(kernel_name or name, func)]


BAD = {"buffer NUL": dict(buffer_name="Y\0%d%d%d"),
       "buffer newline": dict(buffer_name="Y\n"),
       "variable escape": dict(var_name="x\x1b[2J"),
       "kernel DEL": dict(kernel_name="add\x7f")}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(BAD))
def test_non_printable_names_are_refused_at_load(saved, tmp_path, engine, case):
    path = tmp_path / "named.rvm"
    path.write_bytes(with_kernels(saved, funcs=_renamed(saved, **BAD[case])))
    result = run_untrusted(path, [X], engine=engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "TIRFormatError" in result.stdout and "expected a printable name" in result.stdout


def test_messages_may_hold_newlines_but_not_nul():
    from rvm.tir import PrimFunc, AssertStmt, Evaluate, const
    ok = PrimFunc([], AssertStmt(const(True, "bool"), E.StringImm("line\nnext\t."), Evaluate(0)))
    load_prim_funcs(save_prim_funcs([("k", ok)]))
    bad = PrimFunc([], AssertStmt(const(True, "bool"), E.StringImm("a\0b"), Evaluate(0)))
    with pytest.raises(TIRFormatError, match="expected a printable message"):
        load_prim_funcs(save_prim_funcs([("k", bad)]))


def test_percent_in_names_is_printed_not_interpreted(saved):
    funcs = _renamed(saved, buffer_name="Y%d%s%n%p")
    source, names, use_openmp, _ = regenerate_c(save_prim_funcs(funcs), default_compiler())
    assert "snprintf(msg, sizeof(msg), \"%s%d%s\"" in source
    lib = KernelLibrary.from_source(source, names, default_compiler(), use_openmp)
    with pytest.raises(ValueError) as info:
        lib["add_one"](X)
    assert str(info.value).endswith("add_one: expected 2 arguments (X, Y%d%s%n%p), got 1")


def test_a_nul_that_reaches_codegen_cuts_the_name_but_prints_no_stack_words(saved):
    # Trusted codegen (no deserialization check): the C string ends at the NUL, and the
    # only conversion in the format is the argument count.
    from rvm.codegen.c.source import render_c_source
    funcs = _renamed(saved, buffer_name="Y\0%d%d%d")
    source = render_c_source(funcs, use_openmp=False, safe=True)
    lib = KernelLibrary.from_source(source, ["add_one"], default_compiler(), False)
    with pytest.raises(ValueError) as info:
        lib["add_one"](X)
    assert str(info.value).endswith("add_one: expected 2 arguments (X, Y1")
