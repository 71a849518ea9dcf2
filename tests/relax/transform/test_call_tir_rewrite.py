"""CallTIRRewrite: call_tir / call_dps_packed become an allocation plus a call writing into it."""
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal
from rvm.relax.expr import ShapeExpr, Tuple, TupleGetItem
from rvm.relax.struct_info import TupleStructInfo
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.call_tir_rewrite import CallTIRRewrite
from rvm.ir.transform import Sequential
from rvm.relax.transform.to_non_dataflow import ToNonDataflow

from tests.relax.transform.builders import FunctionBuilder, extern, kernel, op

VOID = TupleStructInfo([])


@I.ir_module
class TIRModule:
    @T.prim_func
    def relu(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
        for i, j in T.grid(2, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        cls = TIRModule
        with R.dataflow():
            y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((2, 4), "float32"))
            z = R.call_tir(cls.relu, (y,), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(z)
        return z


def _expected_main(before, dataflow):
    x = before.params[0]
    fb = FunctionBuilder([x], dataflow=dataflow)
    a0 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("relu", x, a0), "_")
    y = fb.let(a0, "y")
    a1 = fb.alloc_tensor([2, 4], "float32")
    fb.let(kernel("relu", y, a1), "_")
    z = fb.let(a1, "z")
    return fb.finish(z, before.attrs)


def test_call_tir_becomes_alloc_and_kernel_call():
    after = Sequential([ToNonDataflow(), CallTIRRewrite()])(TIRModule)
    expected = IRModule({"relu": TIRModule["relu"],
                         "main": _expected_main(TIRModule["main"], dataflow=False)})
    assert_structural_equal(after, expected)


def test_inside_a_dataflow_block_the_block_is_kept():
    main = CallTIRRewrite()(TIRModule)["main"]
    assert [type(b).__name__ for b in main.body.blocks] == ["DataflowBlock"]
    ops = [getattr(b.value, "op", None) for b in main.body.blocks[0].bindings]
    assert [getattr(o, "name", getattr(o, "name_hint", None)) for o in ops] == [
        "relax.builtin.alloc_tensor", "relu", None, "relax.builtin.alloc_tensor", "relu", None]


def test_call_dps_packed_and_tuple_outputs():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 4), "float32"), t: R.Tuple(R.Tensor((3,), "int32"))):
            y = R.call_dps_packed("env.split", (x,),
                                  [R.Tensor((2, 2), "float32"), R.Tensor((2, 2), "float32")])
            z = R.call_dps_packed("env.copy", t, R.Tensor((3,), "int32"))
            return (y, z)

    before = Before["main"]
    x, t = before.params
    fb = FunctionBuilder([x, t])
    a0 = fb.alloc_tensor([2, 2], "float32")
    a1 = fb.alloc_tensor([2, 2], "float32")
    fb.let(extern("env.split", x, a0, a1, sinfo=VOID), "_")
    y = fb.let(Tuple([a0, a1]), "y")
    a2 = fb.alloc_tensor([3], "int32")
    item = fb.let(TupleGetItem(t, 0), "item")
    fb.let(extern("env.copy", item, a2, sinfo=VOID), "_")
    z = fb.let(a2, "z")
    expected = fb.finish(Tuple([y, z]), before.attrs)
    assert_structural_equal(CallTIRRewrite()(Before)["main"], expected)


def test_call_tir_with_tir_vars_uses_call_tir_dyn():
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

    after = CallTIRRewrite()(Before)["main"]
    bindings = after.body.blocks[0].bindings
    call = bindings[1].value
    assert call.op.name == "relax.vm.call_tir_dyn"
    assert call.args[0].name_hint == "fill"
    fields = call.args[1].fields
    assert fields[0] is bindings[0].var and isinstance(fields[1], ShapeExpr)
    assert bindings[2].value is bindings[0].var


def test_other_bindings_are_untouched():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 4), "float32")):
            y = R.add(x, x)
            return y

    assert CallTIRRewrite()(Before) is Before


def test_op_helper_builds_registered_calls():
    assert op("relax.null_value").op.name == "relax.null_value"
