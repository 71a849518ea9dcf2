"""MergeCompositeFunctions: adjacent composite calls of one codegen become one Codegen
function (Before/Expected), without creating cycles."""
import numpy as np

import rvm
from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.relax.backend import get_patterns_with_prefix
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform import FuseOpsByPattern, MergeCompositeFunctions


@I.ir_module
class Composites:
    @R.function(private=True)
    def fused_relax_add(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32")):
        R.func_attr({"Composite": "ccompiler.add", "Primitive": True})
        with R.dataflow():
            x = R.add(a, b)
            R.output(x)
        return x

    @R.function(private=True)
    def fused_relax_subtract(x: R.Tensor((10, 10), "float32"),
                             c: R.Tensor((10, 10), "float32")):
        R.func_attr({"Composite": "ccompiler.subtract", "Primitive": True})
        with R.dataflow():
            y = R.subtract(x, c)
            R.output(y)
        return y

    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32")):
        cls = Composites
        with R.dataflow():
            x = cls.fused_relax_add(a, b)
            y = cls.fused_relax_subtract(x, c)
            w = R.exp(y)
            R.output(w)
        return w


@I.ir_module
class Merged:
    @R.function
    def fused_relax_add_relax_subtract(a: R.Tensor((10, 10), "float32"),
                                       b: R.Tensor((10, 10), "float32"),
                                       c: R.Tensor((10, 10), "float32")):
        R.func_attr({"Codegen": "ccompiler"})
        with R.dataflow():
            @R.function
            def fused_relax_add(a1: R.Tensor((10, 10), "float32"),
                                b1: R.Tensor((10, 10), "float32")):
                R.func_attr({"Composite": "ccompiler.add", "Primitive": True})
                with R.dataflow():
                    x1 = R.add(a1, b1)
                    R.output(x1)
                return x1

            @R.function
            def fused_relax_subtract(x2: R.Tensor((10, 10), "float32"),
                                     c2: R.Tensor((10, 10), "float32")):
                R.func_attr({"Composite": "ccompiler.subtract", "Primitive": True})
                with R.dataflow():
                    y2 = R.subtract(x2, c2)
                    R.output(y2)
                return y2

            x = fused_relax_add(a, b)
            y = fused_relax_subtract(x, c)
            R.output(y)
        return y

    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32")):
        cls = Merged
        with R.dataflow():
            y = cls.fused_relax_add_relax_subtract(a, b, c)
            w = R.exp(y)
            R.output(w)
        return w


def test_adjacent_composites_merge_into_one_codegen_function():
    assert_structural_equal(MergeCompositeFunctions()(Composites), Merged)


@I.ir_module
class Diamond:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)          # ccompiler
            r = R.nn.relu(x)         # ccompiler
            e = R.exp(x)             # default path
            m = R.multiply(r, e)     # ccompiler, but joining x's region would make a cycle
            R.output(m)
        return m


def _codegen_functions(mod):
    return sorted(gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, relax.Function) and f.get_attr("Codegen"))


def test_a_region_never_absorbs_a_call_that_depends_on_it_through_the_default_path():
    mod = FuseOpsByPattern(get_patterns_with_prefix("ccompiler"))(Diamond)
    merged = MergeCompositeFunctions()(mod)
    assert _codegen_functions(merged) == ["fused_relax_add_relax_nn_relu",
                                          "fused_relax_multiply"]
    assert not [f for f in merged.functions.values() if f.get_attr("Composite")]
    a, b = (np.random.default_rng(k).standard_normal((10, 10)).astype("float32")
            for k in range(2))
    ex = relax.build(relax.transform.RunCodegen()(merged), target="c")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b).numpy()
    np.testing.assert_allclose(out, np.maximum(a + b, 0) * np.exp(a + b), rtol=1e-5)


@I.ir_module
class TwoCodegens:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)          # examplejson (its pattern is registered first below)
            r = R.nn.relu(x)         # ccompiler only
            m = R.multiply(r, b)     # examplejson again: a region of its own
            R.output(m)
        return m


def test_regions_of_different_codegens_stay_apart():
    patterns = get_patterns_with_prefix("examplejson") + get_patterns_with_prefix("ccompiler")
    merged = MergeCompositeFunctions()(FuseOpsByPattern(patterns)(TwoCodegens))
    codegens = sorted((gv.name_hint, f.get_attr("Codegen"))
                      for gv, f in merged.functions.items() if f.get_attr("Codegen"))
    assert codegens == [("fused_relax_add", "examplejson"),
                        ("fused_relax_multiply", "examplejson"),
                        ("fused_relax_nn_relu", "ccompiler")]
