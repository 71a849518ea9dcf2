"""function_pass and dataflowblock_pass: Relax passes over functions and dataflow blocks."""
import pytest

from rvm.relax.binding import DataflowBlock, VarBinding
from rvm.relax.function import Function
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.function_pass import dataflowblock_pass, function_pass
from rvm.ir.transform import PassContext, Sequential


@I.ir_module
class Module:
    @T.prim_func
    def copy(x: T.Buffer((2,), "float32"), y: T.Buffer((2,), "float32")):
        for i in range(2):
            with T.block("y"):
                vi = T.axis.remap("S", [i])
                y[vi] = x[vi]

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        with R.dataflow():
            a = R.add(x, x)
            R.output(a)
        with R.dataflow():
            b = R.multiply(a, a)
            R.output(b)
        return b

    @R.function
    def other(x: R.Tensor((2,), "float32")):
        return x


def test_function_pass_sees_every_relax_function():
    seen = []

    @function_pass(opt_level=0, name="Record")
    def record(func, mod, ctx):
        assert isinstance(func, Function) and isinstance(ctx, PassContext)
        seen.append(func)
        return func

    assert record(Module) is Module
    assert len(seen) == 2
    assert record.info.name == "Record"


def test_function_pass_replacing_a_function():
    @function_pass(opt_level=0)
    def tag(func, mod, ctx):
        return func.with_attr("tagged", True)

    after = tag(Module)
    assert after["main"].get_attr("tagged") and after["other"].get_attr("tagged")
    assert after["copy"] is Module["copy"]
    assert after.get_global_var("main").struct_info_ is not None
    assert Module["main"].get_attr("tagged") is None


def test_function_pass_from_a_class():
    @function_pass(opt_level=0, name="Rename")
    class Rename:
        def __init__(self, key):
            self.key = key

        def transform_function(self, func, mod, ctx):
            return func.with_attr(self.key, 1)

    assert Rename("k")(Module)["main"].get_attr("k") == 1


def test_function_pass_must_return_a_function():
    bad = function_pass(lambda func, mod, ctx: None, name="Bad")
    with pytest.raises(TypeError, match="pass Bad turned Relax function 'main' into NoneType"):
        bad(Module)


def test_dataflowblock_pass_sees_each_block():
    blocks = []

    @dataflowblock_pass(opt_level=0, name="Blocks")
    def count(block, mod, ctx):
        blocks.append(len(block.bindings))
        return block

    assert count(Module) is Module
    assert blocks == [1, 1]


def test_dataflowblock_pass_rewrites_blocks():
    @dataflowblock_pass(opt_level=0)
    def drop_nothing_but_rename(block, mod, ctx):
        return DataflowBlock([VarBinding(b.var, b.value) for b in block.bindings])

    after = drop_nothing_but_rename(Module)
    assert after["main"].body.blocks[0] is not Module["main"].body.blocks[0]
    assert after["other"] is Module["other"]


def test_function_passes_compose_and_obey_the_context():
    calls = []
    first = function_pass(lambda f, m, c: calls.append("first") or f, name="First")
    second = function_pass(lambda f, m, c: calls.append("second") or f, opt_level=3,
                           name="Second")
    with PassContext(opt_level=2):
        Sequential([first, second])(Module)
    assert calls == ["first", "first"]
