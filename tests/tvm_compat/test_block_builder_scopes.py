"""BlockBuilder's scope API as TVM's tests use it (tests/python/relax/test_blockbuilder_core.py):
``_begin_dataflow_block``/``_begin_binding_block``/``_end_block``, nested and deferred-parameter
function scopes, ``BlockBuilder.current()`` and ``finalize``; and the acceptance program that
builds IR with ``R.add``, ``R.call_packed``, ``T.meta_var`` and ``relax.TensorType`` outside any
decorator and runs it."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.ir import assert_structural_equal
from rvm.script import from_source, relax as R, tir as T
from tests.tvm_compat.helpers import run_both


def _x(name="x", shape=(2, 3)):
    return relax.Var(name, R.Tensor(shape, "float32"))


def test_raw_dataflow_block_outside_a_function():
    bb = relax.BlockBuilder()
    x = _x()
    bb._begin_dataflow_block()
    lv0 = bb.emit(R.add(x, x))
    gv0 = bb.emit_output(R.multiply(lv0, x))
    block = bb._end_block()
    assert isinstance(block, relax.DataflowBlock) and len(block.bindings) == 2
    assert isinstance(lv0, relax.DataflowVar) and not isinstance(gv0, relax.DataflowVar)
    assert block.bindings[1].var is gv0


def test_binding_block_inside_a_dataflow_block_resumes_it():
    bb = relax.BlockBuilder()
    x = _x()
    bb._begin_dataflow_block()
    a = bb.emit(R.add(x, x))
    bb._begin_binding_block()
    b = bb.emit(R.add(x, x))
    inner = bb._end_block()
    c = bb.emit(R.add(a, a))  # the dataflow block goes on
    outer = bb._end_block()
    assert isinstance(inner, relax.BindingBlock) and not isinstance(inner, relax.DataflowBlock)
    assert [bd.var for bd in inner.bindings] == [b] and not isinstance(b, relax.DataflowVar)
    assert [bd.var for bd in outer.bindings] == [a, c]
    assert isinstance(c, relax.DataflowVar)
    empty = (bb._begin_binding_block(), bb._end_block())[1]
    assert isinstance(empty, relax.BindingBlock) and len(empty.bindings) == 0


def test_end_block_without_a_block_is_an_error():
    bb = relax.BlockBuilder()
    with pytest.raises(ValueError, match=r"bb._end_block\(\): no block is open"):
        bb._end_block()
    with pytest.raises(ValueError, match="bb.emit must be called inside"):
        bb.emit(R.add(_x(), _x()))


def test_nested_function_scope():
    x, y = _x(), _x("y")
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.add(x, x))
            with bb.function("helper", [y]):  # an inner scope while main's block is open
                assert bb.current_function_name() == "helper"
                with bb.dataflow():
                    z = bb.emit_output(R.multiply(y, y))
                helper = bb.emit_func_output(z)
            assert bb.current_function_name() == "main" and bb.current_block_is_dataflow()
            out = bb.emit_output(relax.Call(helper, [lv]))
        bb.emit_func_output(out)
    mod = bb.get()
    assert sorted(g.name_hint for g in mod.get_global_vars()) == ["helper", "main"]
    assert_structural_equal(from_source(mod.script()), mod)
    data = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_allclose(run_both(mod, data), (2 * data) ** 2)


def test_deferred_params_and_current():
    assert relax.BlockBuilder.current() is None
    bb = relax.BlockBuilder()
    x = _x()
    with bb.function("main"):  # the params come with emit_func_output
        assert relax.BlockBuilder.current() is bb
        other = relax.BlockBuilder()
        with other.function("f", [x]):
            assert relax.BlockBuilder.current() is other
            other.emit_func_output(x)
        assert relax.BlockBuilder.current() is bb
        y = bb.emit(R.add(x, x))
        bb.emit_func_output(y, params=[x])
    assert relax.BlockBuilder.current() is None
    with pytest.raises(ValueError, match="without bb.emit_func_output"):
        with bb.function("broken", [x]):
            pass
    assert relax.BlockBuilder.current() is None and bb.current_function_name() is None
    assert [p.name_hint for p in bb.get()["main"].params] == ["x"]


def test_finalize_names_public_functions_by_symbol():
    bb = relax.BlockBuilder()
    x = _x()
    with bb.function("main", [x], private=True):
        bb.emit_func_output(x)
    public = relax.Function([x], relax.SeqExpr([], x)).with_attr("global_symbol", "main")
    gvar = bb.add_func(public, "entry")
    mod = bb.finalize()
    assert gvar.name_hint == "main" and mod["main"].attrs["global_symbol"] == "main"
    assert sorted(g.name_hint for g in mod.get_global_vars()) == ["main", "main_1"]
    assert mod["main_1"].get_attr("global_symbol") is None

    clash = relax.BlockBuilder()
    clash.add_func(public, "a")
    clash.add_func(public.with_attr("tag", 1), "b")
    with pytest.raises(ValueError, match="functions 'a' and 'b' are both public as 'main'"):
        clash.finalize()


def test_acceptance_program_outside_any_decorator():
    """R.add, R.call_packed, T.meta_var, relax.TensorType and a nested function scope."""
    @T.prim_func(private=True)
    def add_const(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
        c = T.meta_var(T.float32(0.5))
        for i, j in T.grid(2, 4):
            B[i, j] = A[i, j] + c

    rvm.register_func("test.tvm_compat.triple",
                      lambda a: rvm.nd.array(a.numpy() * 3), override=True)
    cols = T.meta_var(4).value
    x = relax.Var("x", R.Tensor((2, cols), "float32"))
    assert_structural_equal(relax.analysis.get_static_type(x.struct_info),
                            relax.TensorType(2, "float32"))
    bb = relax.BlockBuilder()
    kernel = bb.add_func(add_const, "add_const")
    with bb.function("main", [x], pure=False):
        y = relax.Var("y", R.Tensor((2, cols), "float32"))
        with bb.function("double", [y]):
            double = bb.emit_func_output(bb.emit(R.add(y, y)))
        doubled = bb.emit(relax.Call(double, [x]))
        shifted = bb.emit(R.call_tir(kernel, (doubled,), R.Tensor((2, cols), "float32")))
        tripled = bb.emit(R.call_packed("test.tvm_compat.triple", shifted,
                                        sinfo_args=R.Tensor((2, cols), "float32")))
        bb.emit_func_output(tripled)
    mod = bb.finalize()
    data = np.arange(8, dtype="float32").reshape(2, 4)
    np.testing.assert_allclose(run_both(mod, data), (2 * data + 0.5) * 3)
