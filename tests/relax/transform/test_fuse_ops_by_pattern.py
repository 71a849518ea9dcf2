"""FuseOpsByPattern: pattern matches become composite functions (Before/Expected)."""
import pytest

from rvm.ir.base import assert_structural_equal
from rvm.relax.backend import get_patterns_with_prefix
from rvm.relax.dpl import is_const, is_op, wildcard
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform import FuseOpsByPattern, FusionPattern

ADD = is_op("relax.add")(wildcard(), wildcard())
CHAIN = is_op("relax.multiply")(is_op("relax.subtract")(ADD, wildcard()), wildcard())


@I.ir_module
class Chain:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)
            y = R.subtract(x, c)
            z = R.multiply(y, d)
            w = R.exp(z)
            R.output(w)
        return w


@I.ir_module
class ChainFused:
    @R.function(private=True)
    def fused_relax_add_relax_subtract_relax_multiply(
            a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
            c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        R.func_attr({"Composite": "ccompiler.chain", "Primitive": True})
        with R.dataflow():
            x = R.add(a, b)
            y = R.subtract(x, c)
            z = R.multiply(y, d)
            R.output(z)
        return z

    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        cls = ChainFused
        with R.dataflow():
            z = cls.fused_relax_add_relax_subtract_relax_multiply(a, b, c, d)
            w = R.exp(z)
            R.output(w)
        return w


def test_a_chain_pattern_becomes_one_composite_function():
    assert_structural_equal(FuseOpsByPattern([("ccompiler.chain", CHAIN)])(Chain), ChainFused)


@I.ir_module
class ChainAnnotated:
    @R.function
    def fused_relax_add(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32")):
        R.func_attr({"Codegen": "ccompiler"})

        @R.function
        def local_func(a1: R.Tensor((10, 10), "float32"), b1: R.Tensor((10, 10), "float32")):
            R.func_attr({"Composite": "ccompiler.add"})
            with R.dataflow():
                x = R.add(a1, b1)
                R.output(x)
            return x

        output = local_func(a, b)
        return output

    @R.function
    def fused_relax_subtract(x: R.Tensor((10, 10), "float32"),
                             c: R.Tensor((10, 10), "float32")):
        R.func_attr({"Codegen": "ccompiler"})

        @R.function
        def local_func(x1: R.Tensor((10, 10), "float32"), c1: R.Tensor((10, 10), "float32")):
            R.func_attr({"Composite": "ccompiler.subtract"})
            with R.dataflow():
                y = R.subtract(x1, c1)
                R.output(y)
            return y

        output = local_func(x, c)
        return output

    @R.function
    def fused_relax_multiply(y: R.Tensor((10, 10), "float32"),
                             d: R.Tensor((10, 10), "float32")):
        R.func_attr({"Codegen": "ccompiler"})

        @R.function
        def local_func(y1: R.Tensor((10, 10), "float32"), d1: R.Tensor((10, 10), "float32")):
            R.func_attr({"Composite": "ccompiler.multiply"})
            with R.dataflow():
                z = R.multiply(y1, d1)
                R.output(z)
            return z

        output = local_func(y, d)
        return output

    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        cls = ChainAnnotated
        with R.dataflow():
            x = cls.fused_relax_add(a, b)
            y = cls.fused_relax_subtract(x, c)
            z = cls.fused_relax_multiply(y, d)
            w = R.exp(z)
            R.output(w)
        return w


def test_annotate_codegen_wraps_each_composite_in_a_codegen_function():
    out = FuseOpsByPattern(get_patterns_with_prefix("ccompiler"), annotate_codegen=True)(Chain)
    assert_structural_equal(out, ChainAnnotated)


@I.ir_module
class TwoAdds:
    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32"),
             i: R.Tensor((4,), "int32"), j: R.Tensor((4,), "int32")):
        with R.dataflow():
            x = R.add(a, b)
            k = R.add(i, j)
            R.output(x, k)
        return (x, k)


@I.ir_module
class FloatAddFused:
    @R.function(private=True)
    def fused_relax_add(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")):
        R.func_attr({"Composite": "test.add_f32", "Primitive": True})
        with R.dataflow():
            x = R.add(a, b)
            R.output(x)
        return x

    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32"),
             i: R.Tensor((4,), "int32"), j: R.Tensor((4,), "int32")):
        cls = FloatAddFused
        with R.dataflow():
            x = cls.fused_relax_add(a, b)
            k = R.add(i, j)
            R.output(x, k)
        return (x, k)


def test_a_check_rejecting_a_match_leaves_it_in_place():
    seen = []

    def float_only(context):
        seen.append(sorted(v.name_hint for v in context.matched_bindings))
        return context.annotated_expr["root"].struct_info.dtype == "float32"

    add = is_op("relax.add")(wildcard(), wildcard())
    pattern = FusionPattern("test.add_f32", add, {"root": add}, float_only)
    assert_structural_equal(FuseOpsByPattern([pattern])(TwoAdds), FloatAddFused)
    assert seen == [["x"], ["k"]]
    rejected = FuseOpsByPattern([("test.none", add, {}, lambda context: False)])(TwoAdds)
    assert_structural_equal(rejected, TwoAdds)


@I.ir_module
class SharedIntermediate:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)
            y = R.subtract(x, c)
            z = R.multiply(y, d)
            w = R.add(z, y)   # y is needed outside the chain
            R.output(w)
        return w


def test_a_match_whose_intermediate_is_used_elsewhere_is_not_fused():
    out = FuseOpsByPattern([("ccompiler.chain", CHAIN)])(SharedIntermediate)
    assert_structural_equal(out, SharedIntermediate)


@I.ir_module
class AddConst:
    @R.function
    def main(a: R.Tensor((4,), "float32")):
        with R.dataflow():
            x = R.add(a, R.const(2.0, "float32"))
            R.output(x)
        return x


@I.ir_module
class AddConstBound:
    @R.function(private=True)
    def fused_relax_add(a: R.Tensor((4,), "float32")):
        R.func_attr({"Composite": "test.add_const", "Primitive": True})
        with R.dataflow():
            x = R.add(a, R.const(2.0, "float32"))
            R.output(x)
        return x

    @R.function
    def main(a: R.Tensor((4,), "float32")):
        cls = AddConstBound
        with R.dataflow():
            x = cls.fused_relax_add(a)
            R.output(x)
        return x


@I.ir_module
class AddConstLifted:
    @R.function(private=True)
    def fused_relax_add(a: R.Tensor((4,), "float32"), param_0: R.Tensor((), "float32")):
        R.func_attr({"Composite": "test.add_const", "Primitive": True})
        with R.dataflow():
            x = R.add(a, param_0)
            R.output(x)
        return x

    @R.function
    def main(a: R.Tensor((4,), "float32")):
        cls = AddConstLifted
        with R.dataflow():
            x = cls.fused_relax_add(a, R.const(2.0, "float32"))
            R.output(x)
        return x


def test_constants_stay_inside_unless_bind_constants_is_false():
    patterns = [("test.add_const", is_op("relax.add")(wildcard(), is_const()))]
    assert_structural_equal(FuseOpsByPattern(patterns)(AddConst), AddConstBound)
    assert_structural_equal(FuseOpsByPattern(patterns, bind_constants=False)(AddConst),
                            AddConstLifted)


def test_earlier_patterns_take_precedence():
    out = FuseOpsByPattern([("a.chain", CHAIN), ("b.add", ADD)])(Chain)
    composites = sorted(f.get_attr("Composite") for f in out.functions.values()
                        if f.get_attr("Composite"))
    assert composites == ["a.chain"]
    out = FuseOpsByPattern([("b.add", ADD), ("a.chain", CHAIN)])(Chain)
    composites = sorted(f.get_attr("Composite") for f in out.functions.values()
                        if f.get_attr("Composite"))
    assert composites == ["b.add"]  # the add is taken: the chain no longer matches


def test_bad_patterns_are_named():
    with pytest.raises(TypeError, match="pattern must be a DFPattern"):
        FuseOpsByPattern([("x.add", "relax.add")])
    with pytest.raises(TypeError, match=r"tuple \(name, pattern"):
        FuseOpsByPattern([ADD])
