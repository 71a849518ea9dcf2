"""The modules the pass tests (tests/relax/transform) use, for the round-trip test.

Module-level modules and helpers of tests/relax/transform are imported; the Before
and Expected modules those tests build inside their test functions are
copied here (script text, or the same constructor calls), each with the pass
its test runs on it.
"""
import numpy as np

from rvm import tir
from rvm.ir.module import IRModule
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import (
    DataflowVar, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple, Var, const,
)
from rvm.relax.function import Function
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from rvm.script import from_source
from rvm.relax.transform.attach_global_symbol import AttachGlobalSymbol
from rvm.relax.transform.call_tir_rewrite import CallTIRRewrite
from rvm.relax.transform.dead_code_elimination import DeadCodeElimination
from rvm.relax.transform.fold_constant import FoldConstant
from rvm.relax.transform.kill_after_last_use import KillAfterLastUse
from rvm.relax.transform.legalize_ops import LegalizeOps
from rvm.relax.transform.lowering_util import normalized
from rvm.relax.transform.static_plan_block_memory import StaticPlanBlockMemory
from rvm.relax.transform.to_non_dataflow import ToNonDataflow
from rvm.relax.transform.vm_builtin_lower import VMBuiltinLower
from rvm.relax.transform.vm_shape_lower import VMShapeLower

from tests.relax.transform import spec_modules, test_bind_params, test_call_tir_rewrite
from tests.relax.transform import test_function_pass, test_legalize_ops, test_lowering_features
from tests.relax.transform.builders import FunctionBuilder, extern, kernel, op

F32 = TensorStructInfo((2, 4), "float32")

# -- tests/relax/transform's module-level modules (valid programs: the whole pipeline runs) --------
IMPORTED = {
    "spec_my_module": spec_modules.MyModule,
    "spec_my_module_with_env": spec_modules.MyModuleWithEnv,
    "spec_my_module_mixture": spec_modules.MyModuleMixture,
    "call_tir_rewrite_tir_module": test_call_tir_rewrite.TIRModule,
    "bind_params_module": test_bind_params.Module,
    "function_pass_module": test_function_pass.Module,
    "lowering_batched": test_lowering_features.Batched,
    "lowering_control": test_lowering_features.Control,
    "lowering_tuples": test_lowering_features.Tuples,
    "lowering_casting": test_lowering_features.Casting,
    "lowering_static": test_lowering_features.Static,
}

# -- copies of the script modules defined inside tests/relax/transform's test functions ------------
SCRIPTS = {
    "dce_unused_bindings": '''
@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            a = R.add(x, x)
            b = R.multiply(a, a)
            c = R.nn.relu(b)
            d = R.multiply(x, x)
            R.output(d)
        return d
''',
    "dce_impure_calls": '''
@I.ir_module
class Before:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), "float32")):
        unused = R.call_packed("env.log", x, sinfo_args=R.Object)
        y = R.add(x, x)
        return x
''',
    "dce_private_functions": '''
@I.ir_module
class Before:
    @R.function(private=True)
    def used(x: R.Tensor((2,), "float32")):
        return x

    @R.function(private=True)
    def unused(x: R.Tensor((2,), "float32")):
        return x

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        cls = Before
        y = cls.used(x)
        return y
''',
    "to_non_dataflow": '''
@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv0 = R.add(x, x)
            lv1 = R.multiply(lv0, x)
            gv = R.nn.relu(lv1)
            R.output(gv)
        y = R.add(gv, gv)
        return y
''',
    "legalize_matmul_relu_add": '''
@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w)
            lv1 = R.nn.relu(lv0)
            gv = R.add(lv1, lv1)
            R.output(gv)
        return gv
''',
    "call_dps_packed_tuples": '''
@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 4), "float32"), t: R.Tuple(R.Tensor((3,), "int32"))):
        y = R.call_dps_packed("env.split", (x,),
                              [R.Tensor((2, 2), "float32"), R.Tensor((2, 2), "float32")])
        z = R.call_dps_packed("env.copy", t, R.Tensor((3,), "int32"))
        return (y, z)
''',
    "call_tir_dyn": '''
@I.ir_module
class Before:
    @T.prim_func
    def fill(y: T.handle, n: T.int64):
        Y = T.match_buffer(y, (n,), "float32")
        for i in range(n):
            with T.block("y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.float32(1)

    @R.function
    def main(s: R.Shape(["n"])):
        n = T.int64()
        cls = Before
        y = R.call_tir(cls.fill, (), out_sinfo=R.Tensor((n,), "float32"), tir_vars=R.shape([n]))
        return y
''',
}


def _legalize_case(op_name):
    """The one-operator module test_legalized_operators_compute_what_numpy_does builds."""
    build_op, _ = test_legalize_ops._CASES[op_name]
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(build_op(x))
        bb.emit_func_output(y)
    return bb.get()


def valid_modules():
    """(name, zero-argument maker) of the modules the whole default pipeline accepts."""
    out = [(name, (lambda mod=mod: mod)) for name, mod in IMPORTED.items()]
    out += [(name, (lambda text=text: from_source(text))) for name, text in SCRIPTS.items()]
    out += [(f"legalize_{name[6:]}", (lambda name=name: _legalize_case(name)))
            for name in sorted(test_legalize_ops._CASES)]
    return out


# -- copies of the constructor-built Before functions, run through their test's pass ---------
def _module(func):
    return IRModule({"main": func})


def _kernel_chain(shapes_dtypes, alias_last=False):
    x = Var("x", F32)
    fb = FunctionBuilder([x])
    prev = x
    for shape, dtype in shapes_dtypes:
        alloc = fb.alloc_tensor(shape, dtype)
        fb.let(kernel("k", prev, alloc), "_")
        prev = alloc
    if alias_last:
        prev = fb.let(Tuple([fb.let(prev, "lv"), x]), "t")
    return _module(fb.finish(prev))


def _kill_chain():
    x = Var("x", F32)
    fb = FunctionBuilder([x])
    a0 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("k", x, a0), "_")
    lv0 = fb.let(a0, "lv0")
    a1 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("k", lv0, a1), "_")
    fb.let(op("relax.memory.kill_tensor", a0), "_")
    a2 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("k", a1, a2), "_")
    return _module(fb.finish(fb.let(a2, "gv")))


def _if_module(alias):
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", F32)
    y = Var("y", F32)
    inner = Var("alias" if alias else "inner", F32)
    t = Var("t", F32)
    first = VarBinding(inner, y) if alias else VarBinding(inner, normalized(op("relax.add", x,
                                                                               x)))
    branch = SeqExpr([BindingBlock([first, VarBinding(t, normalized(
        op("relax.add", inner, inner)))])], t)
    r, out = Var("r", F32), Var("out", F32)
    last = op("relax.add", r, y) if alias else Tuple([r])
    body = SeqExpr([BindingBlock([
        VarBinding(y, normalized(op("relax.add", x, x))),
        VarBinding(r, normalized(If(c, branch, x if alias else y))),
        VarBinding(out, normalized(last))])], out)
    return _module(Function([c, x], body))


def _constants_and_immediates():
    x = Var("x", F32)
    fb = FunctionBuilder([x])
    c = fb.let(const(np.ones((2, 4), "float32")), "c")
    p = fb.let(PrimValue(3), "p")
    y = fb.let(op("relax.add", x, c), "y")
    out = fb.let(Tuple([y, p]), "out")
    z = fb.let(Tuple([x]), "z")
    fb.let(Tuple([z]), "keep")
    return _module(fb.finish(out))


def _packed_alias():
    x = Var("x", F32)
    fb = FunctionBuilder([x])
    a0 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("k", x, a0), "_")
    view = fb.let(extern("vm.builtin.reshape", a0, ShapeExpr([8]),
                         sinfo=TensorStructInfo((8,), "float32")), "view")
    return _module(fb.finish(view))


def _symbolic_allocs():
    n = tir.Var("n", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    fb = FunctionBuilder([x])
    a0 = fb.alloc_tensor([n], "float32")
    fb.let(kernel("k", x, a0), "_")
    a1 = fb.alloc_tensor([n, 3], "int64")
    fb.let(kernel("k", a0, a1), "_")
    return _module(fb.finish(a1))


def _memory_ops():
    x = Var("x", F32)
    shape_var = Var("s", ShapeStructInfo(ndim=2))
    fb = FunctionBuilder([x, shape_var])
    storage = fb.let(op("relax.memory.alloc_storage", ShapeExpr([64]), PrimValue(0),
                        StringImm("global"), DataTypeImm("float32")), "storage")
    t = fb.let(op("relax.memory.alloc_tensor", storage, PrimValue(0), ShapeExpr([2, 4]),
                  DataTypeImm("float32")), "t")
    fb.let(op("relax.memory.kill_tensor", t), "_")
    fb.let(op("relax.memory.kill_storage", storage), "_")
    shp = fb.let(op("relax.shape_of", x), "shp")
    pure = fb.let(op("relax.call_pure_packed", ExternFunc("env.id"), x, sinfo_args=[F32]),
                  "pure")
    dyn = fb.let(op("relax.vm.call_tir_dyn", ExternFunc("kernel"),
                    Tuple([x, ShapeExpr([3])])), "dyn")
    unknown = fb.alloc_tensor([2, 4], "float32")
    unknown_shape = fb.let(op("relax.builtin.alloc_tensor", shape_var, DataTypeImm("float32"),
                              PrimValue(0)), "u")
    return _module(fb.finish(Tuple([shp, pure, dyn, unknown, unknown_shape])))


def _shape_lower_cases():
    """The functions of test_vm_shape_lower, by name."""
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    cases = {}
    x = Var("x", TensorStructInfo((n, 4), "float32"))
    fb = FunctionBuilder([x])
    s = fb.let(ShapeExpr([n, n * 2]), "s")
    cases["derived_dimension"] = fb.finish(s, attrs={"global_symbol": "main"})
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    t = Var("t", TupleStructInfo([TensorStructInfo((3,), "int32"), ShapeStructInfo([5])]))
    cases["static_tuple"] = FunctionBuilder([x, t]).finish(x)
    x, y = Var("x", TensorStructInfo((n,), "float32")), Var("y", TensorStructInfo((4, n),
                                                                                  "float32"))
    cases["second_occurrence"] = FunctionBuilder([x, y]).finish(x)
    x, y = Var("x", TensorStructInfo((n,), "float32")), Var("y", TensorStructInfo((n + 1,),
                                                                                  "float32"))
    cases["derived_parameter"] = FunctionBuilder([x, y]).finish(x)
    x = Var("x", TensorStructInfo(ndim=1, dtype="float32"))
    y = Var("y", TensorStructInfo((m,), "float32"))
    z = Var("z", ShapeStructInfo([m * 4]))
    body = SeqExpr([BindingBlock([MatchCast(y, x, y.struct_info),
                                  VarBinding(z, ShapeExpr([m * 4]))])], z)
    cases["match_cast"] = Function([x], body)
    x = Var("x", TensorStructInfo((n,), "float32"))
    fb = FunctionBuilder([x])
    cases["prim_values"] = fb.finish(fb.let(Tuple([PrimValue(n), x]), "p"))
    x = Var("x", TupleStructInfo([TensorStructInfo((2,), "float32"),
                                  TensorStructInfo((3,), "float32")]))
    cases["tuple_fields"] = FunctionBuilder([x]).finish(x)
    return {name: IRModule({"f": func}) for name, func in cases.items()}


def _if_with_dataflow_branch():
    c = Var("c", TensorStructInfo((), "bool"))
    x = Var("x", TensorStructInfo((2,), "float32"))
    a = DataflowVar("a", x.struct_info)
    b = Var("b", x.struct_info)
    branch = SeqExpr([DataflowBlock([VarBinding(a, normalized(op("relax.add", x, x))),
                                     VarBinding(b, a)])], b)
    r = Var("r", x.struct_info)
    body = SeqExpr([BindingBlock([VarBinding(r, normalized(If(c, branch, x)))])], r)
    return _module(Function([c, x], body))


def _global_symbols():
    def func(attrs=None):
        x = Var("x", TensorStructInfo((2,), "float32"))
        return Function([x], SeqExpr([], x), attrs=attrs)

    return IRModule({"main": func({"global_symbol": "main"}), "helper": func()})


def _foldable():
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    c = np.arange(6, dtype="float32").reshape(2, 3)
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            d = bb.emit(op("relax.multiply", const(c), const(c)))
            gv = bb.emit_output(bb.emit(op("relax.add", x, d)))
        bb.emit_func_output(gv)
    return bb.get()


def _expected_call_tir_rewrite():
    main = test_call_tir_rewrite._expected_main(test_call_tir_rewrite.TIRModule["main"],
                                                dataflow=False)
    return IRModule({"relu": test_call_tir_rewrite.TIRModule["relu"], "main": main})


def pass_cases():
    """(name, maker of the Before module, its test's pass or None) of the constructor-built
    modules; the pass's output is a case of its own."""
    cases = [
        ("kill_chain", _kill_chain, KillAfterLastUse),
        ("kill_void_results", lambda: _kernel_chain([([2, 4], "float32")]), KillAfterLastUse),
        ("kill_in_if_branches", lambda: _if_module(alias=False), KillAfterLastUse),
        ("kill_branch_alias", lambda: _if_module(alias=True), KillAfterLastUse),
        ("kill_constants", _constants_and_immediates, KillAfterLastUse),
        ("plan_chain", lambda: _kernel_chain([([2, 4], "float32")] * 4), StaticPlanBlockMemory),
        ("plan_grow_and_dtypes", lambda: _kernel_chain(
            [([2, 4], "float32"), ([2, 4], "int32"), ([4, 4], "float32"), ([2, 4], "float32")]),
         StaticPlanBlockMemory),
        ("plan_result_alias", lambda: _kernel_chain([([2, 4], "float32")], alias_last=True),
         StaticPlanBlockMemory),
        ("plan_symbolic", _symbolic_allocs, StaticPlanBlockMemory),
        ("plan_packed_alias", _packed_alias, StaticPlanBlockMemory),
        ("builtin_alloc", lambda: _kernel_chain([([2, 4], "float32")]), VMBuiltinLower),
        ("builtin_symbolic_sizes", _symbolic_allocs, VMBuiltinLower),
        ("builtin_memory_ops", _memory_ops, VMBuiltinLower),
        ("non_dataflow_if_branches", _if_with_dataflow_branch, ToNonDataflow),
        ("attach_global_symbol", _global_symbols, AttachGlobalSymbol),
        ("fold_constant", _foldable, FoldConstant),
        ("dce_unused_bindings_alone", lambda: from_source(SCRIPTS["dce_unused_bindings"]),
         DeadCodeElimination),
        ("call_tir_rewrite_dataflow", lambda: test_call_tir_rewrite.TIRModule, CallTIRRewrite),
        ("call_tir_rewrite_expected", _expected_call_tir_rewrite, None),
        ("legalize_expected", lambda: LegalizeOps()(from_source(
            SCRIPTS["legalize_matmul_relu_add"])), None),
        ("bind_params_expected", lambda: test_bind_params._expected(test_bind_params._params()),
         None),
    ]
    for name, mod in _shape_lower_cases().items():
        cases.append((f"shape_lower_{name}", (lambda mod=mod: mod), VMShapeLower))
    return cases
