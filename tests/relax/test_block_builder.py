import numpy as np
import pytest

from rvm import tir
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.analysis.well_formed import well_formed
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, DataflowVar, ExternFunc, Tuple, TupleGetItem, Var, const
from rvm.relax.function import Function
from rvm.relax.op.base import call_dps_packed, call_packed, call_tir
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo


def _t(*shape, dtype="float32"):
    return TensorStructInfo(shape, dtype)


def _relu(x, out_sinfo=None):
    return call_dps_packed("env.relu", (x,), out_sinfo or x.struct_info)


def test_function_with_dataflow_block():
    x = Var("x", _t(1, 4))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        with bb.dataflow():
            lv = bb.emit(_relu(x))
            gv = bb.emit_output(lv)
        gvar = bb.emit_func_output(gv)
    mod = bb.get()
    assert gvar.name_hint == "main" and "main" in mod
    func = mod["main"]
    assert isinstance(func, Function) and func.params == (x,)
    assert func.attrs == {"global_symbol": "main"}
    (block,) = func.body.blocks
    assert isinstance(block, DataflowBlock)
    assert type(block.bindings[0].var) is DataflowVar and block.bindings[0].var is lv
    assert type(gv) is Var and func.body.body is gv
    assert [b.var.name_hint for b in block.bindings] == ["lv", "gv"]
    assert func.ret_struct_info.ndim == 2
    assert well_formed(mod)


def test_params_at_emit_func_output_and_blocks_around_dataflow():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("f"):
        a = bb.emit(call_packed("env.log", x, sinfo_args=ObjectStructInfo()))
        with bb.dataflow():
            lv = bb.emit(_relu(x))
            out = bb.emit_output(lv)
        b = bb.emit(Tuple([out, a]))
        bb.emit_func_output(b, params=[x])
    func = bb.get()["f"]
    kinds = [type(block) for block in func.body.blocks]
    assert kinds == [BindingBlock, DataflowBlock, BindingBlock]
    assert isinstance(func.ret_struct_info, TupleStructInfo)
    assert type(a) is Var and a.name_hint == "gv"


def test_emit_func_output_maps_output_dataflow_var():
    # The seed's from_fx returns the DataflowVar it passed to emit_output.
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            lv = bb.emit(_relu(x))
            gv = bb.emit_output(lv)
        bb.emit_func_output(lv, [x])
    mod = bb.get()
    assert mod["main"].body.body is gv
    assert well_formed(mod)


def test_list_output_becomes_tuple():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=x):  # a single parameter may be given alone
        bb.emit_func_output([x, x])
    assert isinstance(bb.get()["main"].body.body, Tuple)


def test_nested_calls_are_bound_first():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        with bb.dataflow():
            lv = bb.emit(_relu(_relu(x), _t(4)))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    block = bb.get()["main"].body.blocks[0]
    first, second = block.bindings[:2]
    assert second.value.args[1].fields[0] is first.var
    assert [b.var.name_hint for b in block.bindings] == ["lv", "lv1", "gv"]


def test_match_cast_defines_symbolic_var():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo(ndim=1, dtype="float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        with bb.dataflow():
            y = bb.match_cast(x, TensorStructInfo((n,), "float32"))
            lv = bb.emit(call_dps_packed("env.double", (y,), TensorStructInfo((n * 2,), "float32")))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()
    binding = mod["main"].body.blocks[0].bindings[0]
    assert isinstance(binding, MatchCast) and binding.var is y and type(y) is DataflowVar
    # the result mentions n, which params do not define: the return type is erased to rank 1
    assert mod["main"].ret_struct_info.shape is None
    assert mod["main"].ret_struct_info.ndim == 1
    assert well_formed(mod, raise_error=True)


def test_call_tir_of_missing_function_is_rejected_with_its_name():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with pytest.raises(ValueError, match="'missing_kernel' is not in the module"):
        with bb.function("main", params=[x]):
            bb.emit(call_tir(GlobalVar("missing_kernel"), (x,), _t(4)))


def test_calls_between_relax_functions_derive_symbolic_shapes():
    n = tir.Var("n", "int64")
    p = Var("p", TensorStructInfo((n, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("callee", params=[p]):
        bb.emit_func_output(p)
    callee = bb.get().get_global_var("callee")
    assert callee.struct_info.params[0].ndim == 2  # the GlobalVar carries the function's type
    x = Var("x", _t(5, 3))
    with bb.function("main", params=[x]):
        y = bb.emit(Call(callee, [x]))
        bb.emit_func_output(y)
    assert [d.value for d in y.struct_info.shape_values] == [5, 3]
    with pytest.raises(ValueError, match="expected 1 argument"):
        with bb.function("bad", params=[x]):
                bb.emit(Call(callee, [x, x]))


def test_tuple_get_item_normalization():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        t = bb.emit(Tuple([x, x]))
        item = bb.emit(TupleGetItem(t, 1))
        bb.emit_func_output(item)
    assert item.struct_info.ndim == 1
    with pytest.raises(ValueError, match="expected a tuple"):
        with bb.function("bad", params=[x]):
            bb.emit(TupleGetItem(x, 0))


def test_scope_errors():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with pytest.raises(ValueError, match="inside 'with bb.function"):
        bb.emit(x)
    with pytest.raises(ValueError, match="inside 'with bb.dataflow"):
        with bb.function("f", params=[x]):
            bb.emit_output(x)
    with pytest.raises(ValueError, match="outside the dataflow block"):
        with bb.function("g", params=[x]):
            with bb.dataflow():
                bb.emit_func_output(x)
    with pytest.raises(ValueError, match="without bb.emit_func_output"):
        with bb.function("h", params=[x]):
            pass
    with pytest.raises(ValueError, match="params given both"):
        with bb.function("i", params=[x]):
            bb.emit_func_output(x, params=[x])
    with pytest.raises(ValueError, match="no params"):
        with bb.function("j"):
            bb.emit_func_output(x)
    with pytest.raises(ValueError, match="a nested function needs a name of its own"):
        with bb.function("k", params=[x]):
            with bb.function("k", params=[x]):
                pass
    with pytest.raises(ValueError, match="no struct info"):
        with bb.function("m", params=[x]):
            bb.emit(Var("unannotated"))
    # after all these failures the builder still works
    with bb.function("ok", params=[x]):
        bb.emit_func_output(x)
    assert [gv.name_hint for gv in bb.get().get_global_vars()] == ["ok"]


def test_get_inside_function_is_an_error_and_get_returns_a_copy():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        with pytest.raises(ValueError, match="bb.get"):
            bb.get()
        bb.emit_func_output(x)
    first = bb.get()
    bb.add_func(Function([Var("y", _t(2))], SeqExpr([], const(np.zeros(2, "float32")))), "aux")
    assert "aux" not in first and "aux" in bb.get()


def test_add_func_unique_names_and_dedup():
    y = Var("y", _t(2))
    f1 = Function([y], SeqExpr([], y))
    z = Var("z", _t(2))
    same = Function([z], SeqExpr([], z))
    w = Var("w", _t(3))
    other = Function([w], SeqExpr([], w))
    bb = BlockBuilder()
    gv1 = bb.add_func(f1, "k")
    assert bb.add_func(same, "k") is gv1
    gv2 = bb.add_func(other, "k")
    assert gv2.name_hint == "k1"
    bb.update_func(gv2, same)
    assert bb.get()["k1"] is same


def test_builder_extends_existing_module():
    y = Var("y", _t(2))
    mod = IRModule({"aux": Function([y], SeqExpr([], y))})
    bb = BlockBuilder(mod)
    x = Var("x", _t(2))
    with bb.function("main", params=[x]):
        out = bb.emit(Call(mod.get_global_var("aux"), [x]))
        bb.emit_func_output(out)
    assert len(bb.get()) == 2 and len(mod) == 1
    z = Var("z", _t(2))
    assert bb.add_func(Function([z], SeqExpr([], z)), "aux2").name_hint == "aux"  # reused


def test_lookup_binding_and_unique_names():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        call = _relu(x)
        a = bb.emit(call, name_hint="a")
        b = bb.emit(_relu(a), name_hint="a")
        assert bb.lookup_binding(a) is call
        assert not bb.current_block_is_dataflow()
        bb.emit_func_output(b)
    assert (a.name_hint, b.name_hint) == ("a", "a1")


def test_private_and_impure_functions():
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("helper", params=[x], private=True, pure=False):
        y = bb.emit(call_packed("env.print", x, sinfo_args=_t(4)))
        bb.emit_func_output(y)
    func = bb.get()["helper"]
    assert func.attrs is None and not func.is_pure and not func.struct_info.purity
    assert well_formed(bb.get())


def test_normalize_fills_struct_info_of_a_hand_built_function():
    x = Var("x", _t(4))
    lv = DataflowVar("lv")
    gv = Var("gv")
    body = SeqExpr([DataflowBlock([VarBinding(lv, _relu(x)), VarBinding(gv, lv)])], gv)
    func = Function([x], body)
    assert func.struct_info_ is None
    normalized = BlockBuilder().normalize(func)
    assert normalized.ret_struct_info.ndim == 1
    assert lv.struct_info.ndim == 1 and gv.struct_info.ndim == 1
    assert isinstance(ExternFunc("f").struct_info.ret, ObjectStructInfo)


def test_if_normalization_wraps_branches_and_joins_struct_info():
    from rvm.relax.expr import If
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", _t(4))
    bb = BlockBuilder()
    with bb.function("main", params=[c, x]):
        r = bb.emit(If(c, _relu(_relu(x), _t(4)), Tuple([x])))
        bb.emit_func_output(r)
    node = bb.get()["main"].body.blocks[0].bindings[0].value
    assert isinstance(node.true_branch, SeqExpr) and len(node.true_branch.body.args) == 2
    assert len(node.true_branch.blocks[0].bindings) == 1  # the inner call got bound
    assert isinstance(r.struct_info, ObjectStructInfo)  # tensor vs tuple: only "an object"
    assert well_formed(bb.get(), raise_error=True)
    with pytest.raises(ValueError, match="condition must be a bool scalar"):
        with bb.function("bad", params=[c, x]):
            bb.emit(If(x, x, x))
