"""Relax script: SPEC §3's module through the decorators, and the Relax syntax forms."""
import ast

import numpy as np
import pytest

from rvm import relax
from rvm.ir import IRModule, assert_structural_equal
from rvm.relax import expr as _r
from rvm.relax.binding import DataflowBlock, MatchCast
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import ParseError, from_source
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.tir.function import PrimFunc

from tests.script import programs


def test_spec3_module_through_the_decorators():
    @I.ir_module
    class MyModule:
        @T.prim_func
        def relu0(x: T.handle, y: T.handle):
            n = T.int64()
            X = T.match_buffer(x, (1, n), "float32")
            Y = T.match_buffer(y, (1, n), "float32")
            for i, j in T.grid(1, n):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

        @R.function
        def main(x: R.Tensor((1, "m"), "float32"), w: R.Tensor(("n", "m"), "float32")):
            m, n = T.int64(), T.int64()
            cls = MyModule
            with R.dataflow():
                lv0 = R.call_dps_packed("env.linear", (x, w), R.Tensor((1, n), "float32"))
                out = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, n), "float32"))
                R.output(out)
            return out

    assert isinstance(MyModule, IRModule)
    assert isinstance(MyModule["relu0"], PrimFunc)
    main = MyModule["main"]
    assert main.attrs["global_symbol"] == "main"
    block = main.body.blocks[0]
    assert isinstance(block, DataflowBlock)
    lv0, out = (b.var for b in block.bindings)
    assert isinstance(lv0, _r.DataflowVar) and not isinstance(out, _r.DataflowVar)
    m_var = main.params[0].struct_info.shape_values[1]
    assert main.params[1].struct_info.shape_values[1] is m_var
    call = block.bindings[1].value
    assert call.op.name == "relax.call_tir" and call.args[0].name_hint == "relu0"
    assert_structural_equal(from_source(MyModule.script()), MyModule)


def test_stand_alone_relax_function():
    @R.function
    def double(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        y = R.add(x, x)
        return y

    assert isinstance(double, relax.Function)
    assert double.ret_struct_info.shape_values[0].name_hint == "n"
    assert_structural_equal(from_source(double.script()), double)


def test_seed_modules_parse():
    for text in (programs.MY_MODULE, programs.MY_MODULE_WITH_EXTERN_CALL,
                 programs.MY_MODULE_MIXTURE, programs.MY_MODULE_MIXTURE_STATIC):
        mod = from_source(text)
        assert "main" in mod
        out = mod["main"].body.blocks[0].bindings[-1]
        assert out.var.name_hint == "out"
        assert out.value.sinfo_args[0].dtype == "float32"


def test_features_module_forms():
    mod = from_source(programs.RELAX_FEATURES)
    main = mod["main"]
    assert not main.is_pure and main.attrs["note"] == "features"
    bindings = [b for block in main.body.blocks for b in block.bindings]
    by_name = {b.var.name_hint: b for b in bindings}
    assert isinstance(by_name["t"].value, _r.Tuple)
    assert isinstance(by_name["a"].value, _r.TupleGetItem)
    assert isinstance(by_name["r"].value, _r.If)
    assert isinstance(by_name["m"], MatchCast)
    assert by_name["o2"].value.args[2].values[0].name_hint == "n"
    assert by_name["p"].value.op.global_symbol == "env.print"
    assert by_name["z"].value.attrs == {"axes": (1, 0)}
    assert by_name["k"].var.struct_info.ndim == 0
    assert isinstance(main.body.body, _r.Tuple) and len(main.body.body.fields) == 6


def test_show_meta_round_trip_keeps_constant_values():
    mod = programs.bound_params_module()
    text = mod.script(show_meta=True)
    ast.parse(text)
    again = from_source(text)
    assert_structural_equal(again, mod)
    const = again["main"].body.blocks[0].bindings[0].value.args[1].fields[1]
    np.testing.assert_array_equal(const.data.numpy(), programs.mlp_params()["w0"])


def test_metadata_references_need_the_section():
    text = programs.bound_params_module().script()
    with pytest.raises(ParseError, match="show_meta=True"):
        from_source(text)


def test_name_clashes_are_made_unique_deterministically():
    x = relax.Var("x", TensorStructInfo((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        a = bb.emit(relax.call_pure_packed("f", x, sinfo_args=TensorStructInfo((2,), "float32")),
                    "x")
        b = bb.emit(relax.call_pure_packed("f", a, sinfo_args=TensorStructInfo((2,), "float32")),
                    "x")
        bb.emit_func_output(b)
    mod = bb.get()
    # Give both bindings the parameter's name: the printer must still tell them apart.
    for binding in mod["main"].body.blocks[0].bindings:
        binding.var.name_hint = "x"
    text = mod.script()
    ann = 'R.Tensor((2,), dtype="float32")'  # TVM annotates all but call_tir/call_dps_packed
    assert f"x_1: {ann} = R.call_pure_packed" in text
    assert f"x_2: {ann} = R.call_pure_packed(\"f\", x_1" in text
    assert text == mod.script()
    assert_structural_equal(from_source(text), mod)


def test_node_script_and_repr():
    mod = from_source(programs.RELAX_FEATURES)
    main = mod["main"]
    # Printed alone, main refers to the module's functions as I.GlobalVar("f") and parses back.
    assert main.script().startswith("# from rvm.script import ir as I")
    assert 'I.GlobalVar("' in main.script() and "cls." not in main.script()
    assert_structural_equal(from_source(main.script()), main)
    assert "@R.function(pure=False)" in main.script()
    assert repr(mod).startswith("# from rvm.script import ir as I")
    sinfo = main.params[0].struct_info
    assert sinfo.script() == 'R.Tensor((n, 4), dtype="float32")'
    call = main.body.blocks[0].bindings[0].value
    assert repr(call) == "(x, x)"


def test_relax_operators_on_values():
    f = from_source('''
@R.function
def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
    z = x + y * y
    return z
''')
    bindings = f.body.blocks[0].bindings
    assert [b.value.op.name for b in bindings] == ["relax.multiply", "relax.add"]


def test_seed_printed_block_builder_module_equals_the_builder_made_one():
    """TVM's printed text of seed 004 §6.2 parses into the module BlockBuilder makes; its
    ``T.func_attr({"tir.noalias": T.bool(True)})`` flag reads as the bool True."""
    parsed = from_source(programs.SEED_PRINTED_BLOCK_BUILDER)
    built = programs.block_builder_module()
    for name in ("te_matmul", "te_relu"):
        assert parsed[name].attrs["tir.noalias"] is True
    assert_structural_equal(parsed, built)


def test_parsed_nodes_carry_source_spans():
    mod = from_source(programs.MY_MODULE, filename="mlp.py")
    main = mod["main"]
    assert (main.span.filename, main.span.line) == ("mlp.py", 36)
    lv0 = main.body.blocks[0].bindings[0]
    assert lv0.span.line == 44 and lv0.var.name_hint == "lv0"
    assert mod["relu0"].span.line == 4


def test_scalar_constants_that_go_to_metadata_stay_scalars():
    x = relax.Var("x", TensorStructInfo((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        out = bb.emit(_r.Tuple([x, _r.const(np.float32("nan")), _r.const(np.float16("inf"))]))
        bb.emit_func_output(out)
    mod = bb.get()
    text = mod.script(show_meta=True)
    assert '"shape": []' in text
    again = from_source(text)
    assert again["main"].body.blocks[0].bindings[0].value.fields[1].data.shape == ()
    assert_structural_equal(again, mod)


def test_local_functions_parse_print_and_round_trip():
    @I.ir_module
    class WithLocal:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            @R.function
            def twice(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                R.func_attr({"Composite": "demo.twice"})
                z = R.add(y, y)
                return z

            out = twice(x)
            return out

    main = WithLocal["main"]
    local, call = main.body.blocks[0].bindings
    assert isinstance(local.value, relax.Function) and local.value.get_attr("global_symbol") \
        is None and local.value.get_attr("Composite") == "demo.twice"
    assert call.value.op is local.var and call.var.struct_info.dtype == "float32"
    text = WithLocal.script()
    assert "        @R.function\n        def twice(y:" in text
    assert_structural_equal(from_source(text), WithLocal)


def test_a_local_function_needs_r_function():
    source = (
        "@I.ir_module\nclass M:\n    @R.function\n    def main(x: R.Tensor((4,), 'float32')):\n"
        "        def inner(y: R.Tensor((4,), 'float32')):\n            return y\n"
        "        return x\n")
    with pytest.raises(ParseError, match="local function 'inner' needs @R.function"):
        from_source(source)


def test_printer_finds_reads_and_module_callees_inside_branches():
    """A void call's variable read only inside an If branch keeps its name, and a module
    function reached only through call_tir inside a branch makes the function declare
    ``cls = Module`` (both found by the Relax analysis walk the printer shares)."""
    @I.ir_module
    class Module:
        @T.prim_func
        def add_one(a: T.Buffer((2,), "float32"), b: T.Buffer((2,), "float32")):
            for i in range(2):
                with T.block("b"):
                    vi = T.axis.spatial(2, i)
                    b[vi] = a[vi] + T.float32(1)

        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32"), c: R.Tensor((), "bool")):
            cls = Module
            y = R.print(x, format="x: {}")
            w = R.print(x, format="w: {}")
            if c:
                z = R.call_tir(cls.add_one, (x,), R.Tensor((2,), "float32"))
                r = y
            else:
                r = y
            return r

    lines = [line.strip() for line in Module.script().splitlines()]
    assert "cls = Module" in lines
    assert 'y: R.Tuple = R.print(x, format=R.str("x: {}"))' in lines
    assert 'R.print(x, format=R.str("w: {}"))' in lines
    assert_structural_equal(from_source(Module.script()), Module)
