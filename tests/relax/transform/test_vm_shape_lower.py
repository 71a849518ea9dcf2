"""VMShapeLower: parameter checks, the shape heap, shape functions, match_cast, make_shape."""
import pytest

from rvm import tir
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.binding import BindingBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import DataTypeImm, PrimValue, ShapeExpr, StringImm, Tuple, Var
from rvm.relax.function import Function
from rvm.relax.op.memory import call_builtin_with_ctx
from rvm.relax.struct_info import (
    FuncStructInfo, PrimStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo,
)
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import IntImm
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import BufferStore
from rvm.relax.transform.vm_shape_lower import VMShapeLower

from tests.relax.transform.builders import FunctionBuilder, extern, kernel

def _i(v):
    return IntImm("int64", v)


def _calls(func):
    return [getattr(b.value.op, "global_symbol", None) or getattr(b.value.op, "name", None)
            or getattr(b.value.op, "name_hint", None)
            for b in func.body.blocks[0].bindings if hasattr(b.value, "op")]


def test_symbolic_parameter_and_derived_dimension():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n, 4), "float32"))
    before = FunctionBuilder([x])
    s = before.let(ShapeExpr([n, n * 2]), "s")
    mod = IRModule({"main": before.finish(s, attrs={"global_symbol": "main"})})
    after = VMShapeLower()(mod)

    x = Var("x", TensorStructInfo((n, 4), "float32"))
    err = StringImm("main: parameter 'x' expects float32[n, 4]")
    expected = FunctionBuilder([x])
    heap = expected.let(call_builtin_with_ctx("vm.builtin.alloc_shape_heap", [PrimValue(2)],
                                              TensorStructInfo(ndim=1, dtype="int64")),
                        "shape_heap")
    expected.let(extern("vm.builtin.check_tensor_info", x, PrimValue(2),
                        DataTypeImm("float32"), err), "_")
    expected.let(extern("vm.builtin.match_shape", x, heap, PrimValue(2), PrimValue(1),
                        PrimValue(0), PrimValue(0), PrimValue(4), err), "_")
    expected.let(kernel("shape_func_main", heap), "_")
    shape = expected.let(extern("vm.builtin.make_shape", heap, PrimValue(2), PrimValue(1),
                                PrimValue(0), PrimValue(1), PrimValue(1),
                                sinfo=ShapeStructInfo(ndim=2)), "shape")
    es = expected.let(shape, "s", sinfo=s.struct_info)
    H = decl_buffer((2,), "int64", name="H")
    shape_func = PrimFunc([H], BufferStore(H, H[_i(0)] * _i(2), [_i(1)]),
                          attrs={"global_symbol": "shape_func_main", "tir.noalias": True})
    expected_mod = IRModule({"main": expected.finish(es, attrs={"global_symbol": "main"}),
                             "shape_func_main": shape_func})
    assert_structural_equal(after, expected_mod)


def test_static_function_uses_a_null_heap_and_checks_every_dimension():
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    t = Var("t", TupleStructInfo([TensorStructInfo((3,), "int32"), ShapeStructInfo([5])]))
    fb = FunctionBuilder([x, t])
    mod = IRModule({"f": fb.finish(x)})
    f = VMShapeLower()(mod)["f"]
    bindings = f.body.blocks[0].bindings
    assert bindings[0].value.op.name == "relax.null_value"
    assert _calls(f) == ["relax.null_value", "vm.builtin.check_tensor_info",
                         "vm.builtin.match_shape", "vm.builtin.check_tuple_info",
                         "vm.builtin.check_tensor_info", "vm.builtin.match_shape",
                         "vm.builtin.check_shape_info", "vm.builtin.match_shape"]
    match_x = bindings[2].value
    assert [a.value.value for a in match_x.args[2:7]] == [2, 0, 2, 0, 3]
    assert match_x.args[-1].value == "f: parameter 'x' expects float32[2, 3]"
    tuple_item_ctx = bindings[6].value.args[-1].value
    assert tuple_item_ctx == "f: parameter 't' field 0 expects int32[3]"


def test_second_occurrence_of_a_variable_is_checked_against_the_heap():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    y = Var("y", TensorStructInfo((4, n), "float32"))
    f = VMShapeLower()(IRModule({"f": FunctionBuilder([x, y]).finish(x)}))["f"]
    matches = [b.value for b in f.body.blocks[0].bindings
               if getattr(b.value.op, "global_symbol", "") == "vm.builtin.match_shape"]
    assert [a.value.value for a in matches[0].args[2:5]] == [1, 1, 0]  # store n in slot 0
    assert [a.value.value for a in matches[1].args[2:7]] == [2, 0, 4, 3, 0]  # n == heap[0]


def test_derived_parameter_dimension_is_checked_after_the_shape_function():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    y = Var("y", TensorStructInfo((n + 1,), "float32"))
    f = VMShapeLower()(IRModule({"f": FunctionBuilder([x, y]).finish(x)}))
    calls = _calls(f["f"])
    assert calls[-2:] == ["shape_func_f", "vm.builtin.match_shape"]
    last = f["f"].body.blocks[0].bindings[-1].value
    assert [a.value.value for a in last.args[2:5]] == [1, 3, 1]  # y[0] == heap[1] (n + 1)
    assert isinstance(f["shape_func_f"], PrimFunc)


def test_match_cast_defines_new_variables():
    m = tir.Var("m", "int64")
    x = Var("x", TensorStructInfo(ndim=1, dtype="float32"))
    y = Var("y", TensorStructInfo((m,), "float32"))
    z = Var("z", ShapeStructInfo([m * 4]))
    body = SeqExpr([BindingBlock([MatchCast(y, x, y.struct_info),
                                  VarBinding(z, ShapeExpr([m * 4]))])], z)
    f = VMShapeLower()(IRModule({"f": Function([x], body)}))["f"]
    bindings = f.body.blocks[0].bindings
    assert _calls(f) == ["relax.call_builtin_with_ctx", "vm.builtin.check_tensor_info",
                         "vm.builtin.check_tensor_info", "vm.builtin.match_shape",
                         "shape_func_f", "vm.builtin.make_shape"]
    assert bindings[0].value.op.name == "relax.call_builtin_with_ctx"
    assert bindings[2].value.args[-1].value == "f: match_cast of 'y' expects float32[m]"
    assert isinstance(bindings[5], VarBinding) and bindings[5].value is x
    assert not any(isinstance(b, MatchCast) for b in bindings)


def test_undefined_symbolic_variable_is_an_error():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((2,), "float32"))
    fb = FunctionBuilder([x])
    s = fb.let(ShapeExpr([n]), "s")
    with pytest.raises(ValueError, match="f: symbolic variable 'n' is used in the binding of "
                                         "'s' but never defined"):
        VMShapeLower()(IRModule({"f": fb.finish(s)}))


def test_symbolic_prim_values_are_loaded_from_the_heap():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    fb = FunctionBuilder([x])
    p = fb.let(Tuple([PrimValue(n), x]), "p")
    f = VMShapeLower()(IRModule({"f": fb.finish(p)}))["f"]
    assert _calls(f)[-2:] == ["vm.builtin.make_shape", "vm.builtin.tuple_getitem"]
    assert isinstance(f.body.blocks[0].bindings[-1].value.fields[0], Var)


def test_derived_dimension_of_an_undefined_variable_is_an_error():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((2,), "float32"))
    fb = FunctionBuilder([x])
    s = fb.let(ShapeExpr([n + 1]), "s")
    with pytest.raises(ValueError, match=r"f: dimension n \+ 1 is used in the binding of 's' "
                                         r"but n is never defined"):
        VMShapeLower()(IRModule({"f": fb.finish(s)}))


def test_tuple_fields_are_read_once_when_nothing_is_derived():
    x = Var("x", TupleStructInfo([TensorStructInfo((2,), "float32"),
                                  TensorStructInfo((3,), "float32")]))
    f = VMShapeLower()(IRModule({"f": FunctionBuilder([x]).finish(x)}))["f"]
    items = [b for b in f.body.blocks[0].bindings if not hasattr(b.value, "op")]
    assert len(items) == 2  # x[0] and x[1], in phase 1 only


def _run(text, *args):
    import rvm
    from rvm import relax
    from rvm.script import from_source

    vm = relax.VirtualMachine(relax.build(from_source(text)), rvm.cpu())
    return vm["main"](*args)


SQUARE_BEFORE_ROOT = '''
@I.ir_module
class Module:
    @R.function
    def main(y: R.Tensor(("n * n",), "float32"), x: R.Tensor(("n",), "float32")):
        z = R.add(y, y)
        return z
'''


def test_dimension_of_a_variable_no_kernel_input_binds():
    """``n * n`` with n bound only by another parameter: the legalized kernel gets n as an
    extra integer argument (tir_vars) that VMShapeLower reads from the shape heap."""
    import numpy as np

    from rvm.script import from_source
    from rvm.relax.transform.legalize_ops import LegalizeOps

    mod = LegalizeOps()(from_source(SQUARE_BEFORE_ROOT))
    call = mod["main"].body.blocks[0].bindings[0].value
    assert len(call.args) == 3 and call.args[2].values[0].name_hint == "n"
    assert mod["add"].params[-1].name_hint == "n"
    y = np.arange(9, dtype="float32")
    np.testing.assert_array_equal(_run(SQUARE_BEFORE_ROOT, y, np.zeros(3, "float32")).numpy(),
                                  2 * y)
    with pytest.raises(ValueError, match=r"parameter 'y'.*dimension 0 expected 9"):
        _run(SQUARE_BEFORE_ROOT, np.arange(8, dtype="float32"), np.zeros(3, "float32"))


PRIM_DEFINES = '''
@I.ir_module
class Module:
    @R.function
    def main(k: R.Prim(value="n"), y: R.Tensor(("n * 2",), "float32")):
        z = R.add(y, y)
        return z
'''


def test_prim_value_parameter_defines_its_variable():
    import numpy as np

    y = np.arange(6, dtype="float32")
    np.testing.assert_array_equal(_run(PRIM_DEFINES, 3, y).numpy(), 2 * y)
    with pytest.raises(ValueError, match=r"parameter 'y'.*expected 6"):
        _run(PRIM_DEFINES, 3, np.arange(4, dtype="float32"))
    with pytest.raises(TypeError,
                       match=r"parameter 'k'.*expected a value of dtype int64, got float"):
        _run(PRIM_DEFINES, 3.5, y)


def test_prim_value_parameters_are_checked_against_the_heap():
    import numpy as np

    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), k: R.Prim(value="n")):
        return x
'''
    np.testing.assert_array_equal(_run(text, np.ones(2, "float32"), 2).numpy(), [1, 1])
    with pytest.raises(ValueError, match=r"parameter 'k'.*expected the value 2, got 5"):
        _run(text, np.ones(2, "float32"), 5)


def test_variable_only_inside_an_expression_is_rejected_at_parse_time():
    """As in TVM: ``y: R.Tensor(("n * n",))`` alone cannot define n."""
    from rvm.script import ParseError, from_source

    with pytest.raises(ParseError, match="parameter 'y': symbolic variable 'n' is not defined"):
        from_source(SQUARE_BEFORE_ROOT.replace(', x: R.Tensor(("n",), "float32")', ''))


def test_callable_parameters_and_tuple_fields_are_checked():
    f = Var("f", FuncStructInfo([TensorStructInfo((2,), "float32")],
                                TensorStructInfo((2,), "float32")))
    t = Var("t", TupleStructInfo([PrimStructInfo("int32"), FuncStructInfo([], PrimStructInfo())]))
    lowered = VMShapeLower()(IRModule({"g": FunctionBuilder([f, t]).finish(f)}))["g"]
    calls = _calls(lowered)
    assert calls == ["relax.null_value", "vm.builtin.check_func_info",
                     "vm.builtin.check_tuple_info", "vm.builtin.check_prim_value_info",
                     "vm.builtin.check_func_info"]
    bindings = lowered.body.blocks[0].bindings
    assert bindings[1].value.args[1].value == "g: parameter 'f' expects Callable"
    assert bindings[-1].value.args[1].value == "g: parameter 't' field 1 expects Callable"


def test_a_shape_variable_that_is_a_size_is_stored_checked():
    """m is a tensor's dimension (a size: STORE_SIZE, refused when negative), k only inside
    a sum (STORE: may be negative); a tensor's own dimensions need no check."""
    m, k = tir.Var("m", "int64"), tir.Var("k", "int64")
    s = Var("s", ShapeStructInfo([m, k]))
    x = Var("x", TensorStructInfo((m, k + 1), "float32"))
    f = VMShapeLower()(IRModule({"f": FunctionBuilder([s, x]).finish(x)}))["f"]
    matches = [b.value for b in f.body.blocks[0].bindings
               if getattr(b.value.op, "global_symbol", "") == "vm.builtin.match_shape"]
    assert [a.value.value for a in matches[0].args[2:7]] == [2, 4, 0, 1, 1]
    assert [a.value.value for a in matches[1].args[2:5]] == [2, 3, 0]  # x: m == heap[0]
