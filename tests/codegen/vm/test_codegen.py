"""VM codegen on hand-lowered Relax: registers, leaves as arguments, kernels, calls, errors."""
import numpy as np
import pytest

import rvm
from rvm.bytecode.contract import VOID_REG, ArgKind
from rvm.codegen.vm.codegen import CodegenError, vm_codegen
from rvm.driver.build_module import build as build_kernels
from rvm.ir.module import IRModule
from rvm.relax.binding import MatchCast
from rvm.relax.expr import Call, Constant, ShapeExpr, Tuple, TupleGetItem, Var, const
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo
from rvm.runtime.ndarray import array
from rvm.tir.function import PrimFunc
from rvm.vm.machine import VirtualMachine
from tests.codegen.vm.lowered import (
    add_kernel, alloc_storage, alloc_tensor, builtin_with_ctx, dps_add_module, extern, func, kill,
    rand, tensor,
)


def _build(mod, target="python"):
    ib = vm_codegen(mod)
    kernels = IRModule({gv: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)})
    if len(kernels):
        ib.add_kernel_library(build_kernels(kernels, target=target))
    return ib.get()


def _calls(ex, name):
    info = ex.function_info(name)
    names = [f.name for f in ex.func_table]
    return [names[i.fields[1]] for i in ex.instructions[info.start:info.end]
            if i.op.name == "call"]


@pytest.fixture
def env_funcs():
    seen = []

    def env_add(a, b, out):
        seen.append("add")
        np.add(np.from_dlpack(a), np.from_dlpack(b), out=np.from_dlpack(out))

    rvm.register_func("test.codegen.add", env_add, override=True)
    rvm.register_func("test.codegen.sum", lambda *xs: sum(xs), override=True)
    yield seen


def test_identity_records_param_names():
    x = tensor("x", (2,))
    ex = _build(IRModule({"main": func([x], [], x, "main")}))
    info = ex.function_info("main")
    assert info.param_names == ("x",) and info.num_args == 1
    a = rand(2)
    np.testing.assert_array_equal(VirtualMachine(ex)["main"](a).numpy(), a)


@pytest.mark.parametrize("target", ["python", "c"])
def test_kernel_call_with_storage_and_kill(target):
    ex = _build(dps_add_module(4), target)
    assert _calls(ex, "main") == ["vm.builtin.alloc_storage", "vm.builtin.alloc_tensor", "add"]
    a, b = rand(4), rand(4, seed=1)
    out = VirtualMachine(ex)["main"](a, b)
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)


def test_kernel_result_unused_goes_to_no_register():
    ex = _build(dps_add_module(4))
    info = ex.function_info("main")
    kernel_call = [i for i in ex.instructions[info.start:info.end] if i.op.name == "call"][2]
    assert kernel_call.fields[0] == VOID_REG


def test_alloc_storage_size_is_an_immediate():
    ex = _build(dps_add_module(4))
    info = ex.function_info("main")
    alloc = ex.instructions[info.start]
    size = alloc.fields[2][1]
    assert size.kind == ArgKind.IMM and size.value == 16


def test_source_map_names_bindings():
    ex = _build(dps_add_module(4))
    info = ex.function_info("main")
    sources = [ex.source_of(pc) for pc in range(info.start, info.end)]
    # the kernel call's result is unused: it is named after its output argument
    assert sources == [("main", "storage"), ("main", "out"), ("main", "out"), ("main", "return")]


def test_source_map_names_a_kernel_call_after_the_alias_of_its_output():
    mod = dps_add_module(4)
    main = mod["main"]
    block = main.body.blocks[0]
    lv0 = tensor("lv0", (4,))
    from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding

    bindings = list(block.bindings[:3]) + [VarBinding(lv0, block.bindings[1].var)]
    mod["main"] = main.with_fields(body=SeqExpr([BindingBlock(bindings)], lv0))
    ex = _build(mod)
    info = ex.function_info("main")
    assert ex.source_of(info.start + 2) == ("main", "lv0")


def test_kill_object_nulls_the_register_unless_the_function_ends():
    x = tensor("x", (4,))
    s, t = Var("s", ObjectStructInfo()), tensor("t", (4,))
    k1, k2 = Var("k1", ObjectStructInfo()), Var("k2", ObjectStructInfo())
    main = func([x], [(s, alloc_storage(16)), (t, alloc_tensor(s, 0, (4,))), (k1, kill(s)),
                      (k2, kill(t))], x, "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.alloc_storage", "vm.builtin.alloc_tensor"]
    main = func([x], [(s, alloc_storage(16)), (k1, kill(s)), (t, alloc_tensor(s, 0, (4,)))],
                x, "main")
    ex = _build(IRModule({"main": main}))
    info = ex.function_info("main")
    kill_instr = ex.instructions[info.start + 1]
    assert kill_instr.fields[0] == ex.instructions[info.start].fields[0]  # same register
    with pytest.raises(TypeError, match="Storage"):
        VirtualMachine(ex)["main"](rand(4))  # the storage was dropped before its use


def test_constants_pooled_and_aliases_not_copied(env_funcs):
    x = tensor("x", (3,))
    c = const(np.arange(3, dtype="float32"))
    alias, c_alias = tensor("alias", (3,)), tensor("c_alias", (3,))
    s, out, o2 = Var("s", ObjectStructInfo()), tensor("out", (3,)), tensor("o2", (3,))
    u1, u2 = Var("u1", ObjectStructInfo()), Var("u2", ObjectStructInfo())
    main = func([x], [(alias, x), (c_alias, c), (s, alloc_storage(24)),
                      (out, alloc_tensor(s, 0, (3,))), (o2, alloc_tensor(s, 12, (3,))),
                      (u1, extern("test.codegen.add", alias, c, out)),
                      (u2, extern("test.codegen.add", out, c_alias, o2))], o2, "main")
    ex = _build(IRModule({"main": main}))
    assert sum(1 for k in ex.constants if isinstance(k, rvm.nd.NDArray)) == 1
    assert "vm.builtin.copy" not in _calls(ex, "main")
    np.testing.assert_allclose(VirtualMachine(ex)["main"](np.ones(3, "float32")).numpy(),
                               1 + 2 * np.arange(3))
    assert env_funcs == ["add", "add"]


def test_returning_a_constant_copies_it_into_a_register():
    x = tensor("x", (3,))
    main = func([x], [], const(np.full(3, 7, "float32")), "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.copy"]
    np.testing.assert_array_equal(VirtualMachine(ex)["main"](rand(3)).numpy(), [7, 7, 7])


def test_tuples_in_and_out(env_funcs):
    t = Var("t", rvm.relax.TupleStructInfo([TensorStructInfo((2,), "float32")] * 2))
    a, b = tensor("a", (2,)), tensor("b", (2,))
    pair = Var("pair", ObjectStructInfo())
    main = func([t], [(a, TupleGetItem(t, 0)), (b, TupleGetItem(t, 1)),
                      (pair, Tuple([b, a]))], pair, "main")
    ex = _build(IRModule({"main": main}))
    x, y = rand(2), rand(2, seed=3)
    out = VirtualMachine(ex)["main"](rvm.runtime.convert([array(x), array(y)]))
    np.testing.assert_array_equal(out[0].numpy(), y)
    np.testing.assert_array_equal(out[1].numpy(), x)


def test_tuple_argument_built_on_the_fly(env_funcs):
    x = Var("x", rvm.relax.PrimStructInfo("int64"))
    r = Var("r", ObjectStructInfo())
    length = Var("n", ObjectStructInfo())
    main = func([x], [(r, Tuple([x, x, x])), (length, extern("test.codegen.sum", x, x))],
                Tuple([r, length]), "main")
    ex = _build(IRModule({"main": main}))
    out = VirtualMachine(ex)["main"](5)
    assert list(out[0]) == [5, 5, 5] and out[1] == 10


def test_builtin_with_ctx_gets_the_vm_state():
    n = Var("n", ObjectStructInfo())
    heap = Var("heap", ObjectStructInfo())
    main = func([n], [(heap, builtin_with_ctx("vm.builtin.alloc_shape_heap", n))], heap, "main")
    ex = _build(IRModule({"main": main}))
    first = ex.instructions[ex.function_info("main").start].fields[2][0]
    assert first.kind == ArgKind.VM_STATE
    assert VirtualMachine(ex)["main"](3).shape == (3,)


def test_calls_between_relax_functions_and_closures():
    x = tensor("x", (2,))
    y = tensor("y", (2,))
    double = func([y], [], Tuple([y, y]), "double")
    mod = IRModule()
    gv_double = mod.add("double", double)
    f, r1, r2 = Var("f", ObjectStructInfo()), Var("r1", ObjectStructInfo()), \
        Var("r2", ObjectStructInfo())
    main = func([x], [(r1, Call(gv_double, [x])), (f, gv_double), (r2, Call(f, [x]))],
                Tuple([r1, r2]), "main")
    mod.add("main", main)
    ex = _build(mod)
    assert _calls(ex, "main") == ["double", "double", "vm.builtin.make_tuple"]
    a = rand(2)
    out = VirtualMachine(ex)["main"](a)
    np.testing.assert_array_equal(out[1][0].numpy(), a)


def test_closure_parameter_is_invoked():
    clo, x = Var("clo", ObjectStructInfo()), Var("x", ObjectStructInfo())
    r = Var("r", ObjectStructInfo())
    main = func([clo, x], [(r, Call(clo, [x, x]))], r, "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.invoke_closure"]
    assert VirtualMachine(ex)["main"](rvm.runtime.convert(lambda a, b: a * b), 6) == 36


def test_forward_reference_to_a_later_function():
    x = tensor("x", (2,))
    r = tensor("r", (2,))
    mod = IRModule()
    gv_later = rvm.ir.GlobalVar("later")
    mod.add("main", func([x], [(r, Call(gv_later, [x]))], r, "main"))
    y = tensor("y", (2,))
    mod.add(gv_later, func([y], [], y, "later"))
    ex = _build(mod)
    a = rand(2)
    np.testing.assert_array_equal(VirtualMachine(ex)["main"](a).numpy(), a)


def test_null_value_and_symbolic_free_shapes():
    x = tensor("x", (2, 3))
    nv, shp = Var("nv", ObjectStructInfo()), Var("shp", ObjectStructInfo())
    main = func([x], [(nv, Call(Op.get("relax.null_value"), [])),
                      (shp, ShapeExpr([2, 3]))], Tuple([nv, shp]), "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.make_tuple"]  # null and shape: direct arguments
    nv_out, shape_out = VirtualMachine(ex)["main"](rand(2, 3))
    assert nv_out is None and tuple(shape_out) == (2, 3)


def test_returned_null_is_materialized():
    x = tensor("x", (2,))
    main = func([x], [], Call(Op.get("relax.null_value"), []), "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.null_value"]
    assert VirtualMachine(ex)["main"](rand(2)) is None


def test_unlowered_operator_is_rejected():
    x = tensor("x", (2,))
    r = tensor("r", (2,))
    call = Call(Op.get("relax.call_tir"), [rvm.ir.GlobalVar("k"), Tuple([x])],
                sinfo_args=[TensorStructInfo((2,), "float32")])
    with pytest.raises(CodegenError, match=r"main: operator relax.call_tir \(binding 'r'\)"):
        vm_codegen(IRModule({"main": func([x], [(r, call)], r, "main")}))


def test_match_cast_is_rejected():
    from rvm.relax.binding import BindingBlock, SeqExpr
    from rvm.relax.function import Function

    x = tensor("x", (2,))
    y = tensor("y", (2,))
    body = SeqExpr([BindingBlock([MatchCast(y, x, TensorStructInfo((2,), "float32"))])], y)
    with pytest.raises(CodegenError, match="match_cast"):
        vm_codegen(IRModule({"main": Function([x], body)}))


def test_symbolic_shape_is_rejected():
    n = rvm.tir.Var("n", "int64")
    x = tensor("x", (2,))
    s = Var("s", ObjectStructInfo())
    main = func([x], [(s, ShapeExpr([n]))], s, "main")
    with pytest.raises(ValueError, match="symbolic"):
        vm_codegen(IRModule({"main": main}))


def test_unknown_callee_is_rejected():
    x = tensor("x", (2,))
    r = tensor("r", (2,))
    main = func([x], [(r, Call(rvm.ir.GlobalVar("nowhere"), [x]))], r, "main")
    with pytest.raises(CodegenError, match="nowhere"):
        vm_codegen(IRModule({"main": main}))


def test_large_integer_and_float_prim_values():
    from rvm.relax.expr import PrimValue

    x = Var("x", ObjectStructInfo())
    r = Var("r", ObjectStructInfo())
    big = 1 << 60
    main = func([x], [(r, extern("test.codegen.sum", x, PrimValue(big), PrimValue(0.5)))], r,
                "main")
    rvm.register_func("test.codegen.sum", lambda *xs: sum(xs), override=True)
    ex = _build(IRModule({"main": main}))
    assert VirtualMachine(ex)["main"](1) == 1 + big + 0.5


def test_constant_tensor_argument_reaches_kernel():
    mod = IRModule()
    gv = mod.add("add", add_kernel(4))
    x = tensor("x", (4,))
    s, out = Var("s", ObjectStructInfo()), tensor("out", (4,))
    u, k = Var("u", ObjectStructInfo()), Var("k", ObjectStructInfo())
    c = Constant(array(np.arange(4, dtype="float32")))
    mod.add("main", func([x], [(s, alloc_storage(16)), (out, alloc_tensor(s, 0, (4,))),
                               (u, Call(gv, [x, c, out])), (k, kill(s))], out, "main"))
    ex = _build(mod)
    np.testing.assert_allclose(VirtualMachine(ex)["main"](np.ones(4, "float32")).numpy(),
                               1 + np.arange(4))


def test_kill_of_an_alias_is_emitted_once():
    x = tensor("x", (4,))
    s, t, alias = Var("s", ObjectStructInfo()), tensor("t", (4,)), tensor("alias", (4,))
    k1, k2, k3 = (Var(n, ObjectStructInfo()) for n in ("k1", "k2", "k3"))
    r = Var("r", ObjectStructInfo())
    rvm.register_func("test.codegen.sum", lambda *xs: sum(xs), override=True)
    main = func([x], [(s, alloc_storage(16)), (t, alloc_tensor(s, 0, (4,))), (alias, t),
                      (k1, kill(t)), (k2, kill(alias)), (k3, kill(s)),
                      (r, extern("test.codegen.sum", x, x))], r, "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main").count("vm.builtin.null_value") == 2


@pytest.mark.parametrize("callee", ["kernel", "function"])
def test_argument_count_of_a_module_function_is_checked(callee):
    mod = IRModule()
    if callee == "kernel":
        gv = mod.add("add", add_kernel(4))
    else:
        y = tensor("y", (4,))
        gv = mod.add("ident", func([y], [], y, "ident"))
    x, r = tensor("x", (4,)), Var("r", ObjectStructInfo())
    mod.add("main", func([x], [(r, Call(gv, [x, x, x, x, x]))], x, "main"))
    with pytest.raises(CodegenError, match=rf"main: call of {callee} '{gv.name_hint}' \(binding "
                                           rf"'r'\) passes 5 argument\(s\); it takes"):
        vm_codegen(mod)


def test_unread_tuple_and_tuple_item_emit_nothing():
    x = tensor("x", (2,))
    t, item = Var("t", ObjectStructInfo()), tensor("item", (2,))
    pair = Var("pair", rvm.relax.TupleStructInfo([TensorStructInfo((2,), "float32")] * 2))
    main = func([x], [(pair, Tuple([x, x])), (t, Tuple([x])), (item, TupleGetItem(pair, 1))],
                x, "main")
    ex = _build(IRModule({"main": main}))
    assert _calls(ex, "main") == ["vm.builtin.make_tuple"]  # pair only: item reads it
