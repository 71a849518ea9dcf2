"""Finding 10: index checks (``tir.check_index``, which take, gather and scatter kernels use to
refuse an index outside its axis) carry a message from the file. A file's message full of
printf directives is printed as written (the generated C never uses it as a format), one
without its three ``{}`` or with bounds of another dtype is refused at load, and a bad
index still fails the call with an IndexError on both engines."""
import numpy as np
import pytest

from rvm import relax
from rvm.relax import op as O
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo as T
from rvm.tir import expr as E
from rvm.tir.stmt_functor import post_order_visit
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels

X = np.arange(12, dtype="float32").reshape(4, 3)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    bb = BlockBuilder()
    x, i = Var("x", T((4, 3), "float32")), Var("i", T((2,), "int64"))
    with bb.function("main", [x, i]):
        with bb.dataflow():
            out = bb.emit_output(O.take(x, i, axis=0))
        bb.emit_func_output(out)
    path = tmp_path_factory.mktemp("finding10") / "take.rvm"
    relax.build(bb.get(), target="c").export_library(str(path))
    return path.read_bytes()


def _edited(saved, tmp_path, message=None, low=None):
    """The file with the message (or the low bound) of its kernels' index checks replaced."""
    funcs = kernel_tir(saved)
    calls = []
    for _, func in funcs:
        post_order_visit(func.body, lambda n: calls.append(n) if isinstance(n, E.Call)
                         and n.op == "tir.check_index" else None)
    assert calls
    for call in calls:  # the codegen reads the nodes
        if message is not None:
            call.args[3].value = message
        if low is not None:
            call.args = (call.args[0], low) + tuple(call.args[2:])
    path = tmp_path / "edited.rvm"
    path.write_bytes(with_kernels(saved, funcs))
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bad_index_fails_the_loaded_kernel_naming_it(saved, tmp_path, engine):
    path = tmp_path / "take.rvm"
    path.write_bytes(saved)
    ok = run_untrusted(path, [X, np.array([3, -4], "int64")], engine=engine)
    assert ok.returncode == 0 and "RAN [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]" in ok.stdout, \
        ok.stdout + ok.stderr
    bad = run_untrusted(path, [X, np.array([0, 4], "int64")], engine=engine)
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "RUN-ERROR IndexError take: take: index 4 out of range [-4, 4) along axis 0" \
        in bad.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_printf_directives_in_the_message_are_printed_as_written(saved, tmp_path, engine):
    hostile = "%n%s%p%lld %%d: index {} out of range [{}, {}) %n%s"
    path = _edited(saved, tmp_path, hostile)
    result = run_untrusted(path, [X, np.array([0, 9], "int64")], engine=engine)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "take: %n%s%p%lld %%d: index 9 out of range [-4, 4) %n%s" in result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_a_message_without_three_fields_is_refused_at_load(saved, tmp_path, engine):
    result = run_untrusted(_edited(saved, tmp_path, "{} {} {} %n{}"), [X, np.zeros(2, "int64")],
                           engine=engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "LOAD-ERROR" in result.stdout, result.stdout
    assert "check-index: check_index: the message must be a str with three '{}'" in \
        result.stdout, result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_bounds_of_another_dtype_are_refused_at_load(saved, tmp_path, engine):
    result = run_untrusted(_edited(saved, tmp_path, low=E.FloatImm("float32", -4.0)),
                           [X, np.zeros(2, "int64")], engine=engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "check-index: T.float32(-4.0)" in result.stdout, result.stdout
    assert "expected an int64 index and bounds" in result.stdout, result.stdout
