"""ComposeLayerNorm: a layer normalization spelled out op by op becomes R.nn.layer_norm;
chains that differ from it (the epsilon's place, the axes, the affine parameters' shape)
are left as they are. Every rewritten form runs against numpy's formula."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.relax import op
from rvm.relax.transform.compose_layer_norm import ComposeLayerNorm
from rvm.script import from_source
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T  # noqa: F401  (symbolic shapes in the script modules)


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, "n", 8), "float32"), g: R.Tensor((8,), "float32"),
             b: R.Tensor((8,), "float32")):
        with R.dataflow():
            m = R.mean(x, axis=[-1], keepdims=True)
            d = R.subtract(x, m)
            p = R.power(d, R.const(2.0, "float32"))
            v = R.mean(p, axis=[-1], keepdims=True)
            e = R.add(v, R.const(1e-5, "float32"))
            s = R.sqrt(e)
            q = R.divide(d, s)
            y0 = R.multiply(q, g)
            y = R.add(y0, b)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, "n", 8), "float32"), g: R.Tensor((8,), "float32"),
             b: R.Tensor((8,), "float32")):
        with R.dataflow():
            # the epsilon is the float32 constant's value
            y = R.nn.layer_norm(x, g, b, axes=[2], epsilon=9.999999747378752e-06)
            R.output(y)
        return y


def test_the_opset_14_export_form_becomes_one_layer_norm():
    assert_structural_equal(ComposeLayerNorm()(Before), Expected)


def _chain(form):
    """x (2, 3, 4, 8) -> the normalization of ``form`` (FORMS), parameters g and b."""
    shape, axes, gshape, kwargs = FORMS[form][:4]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(shape, "float32"))
    g = relax.Var("g", relax.TensorStructInfo(gshape, "float32"))
    b = relax.Var("b", relax.TensorStructInfo(gshape, "float32"))
    eps = relax.const(kwargs.get("eps", 1e-5), "float32")
    with bb.function("main", [x, g, b]):
        with bb.dataflow():
            d = bb.emit(op.subtract(x, op.mean(x, axis=axes, keepdims=True)))
            sq = op.multiply(d, d) if kwargs.get("square") == "product" else \
                op.power(d, relax.const(kwargs.get("power", 2.0), "float32"))
            v = bb.emit(op.mean(sq, axis=kwargs.get("var_axes", axes), keepdims=True))
            if kwargs.get("eps_after_sqrt"):
                s = op.add(op.sqrt(v), eps)
            else:
                s = op.sqrt(op.add(eps, v) if kwargs.get("eps_first") else op.add(v, eps))
            n = bb.emit(op.divide(d, s))
            y = op.multiply(g, n) if kwargs.get("gamma_first") else op.multiply(n, g)
            y = op.add(b, y) if kwargs.get("beta_first") else op.add(y, b)
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


FORMS = {  # name: (x shape, axes, gamma shape, options, rewritten)
    "last axis": ((2, 3, 4, 8), [-1], (8,), {}, True),
    "last two axes": ((2, 3, 4, 8), [2, 3], (4, 8), {}, True),
    "square as a product": ((2, 3, 4, 8), [-1], (8,), {"square": "product"}, True),
    "operands swapped": ((2, 3, 4, 8), [-1], (8,),
                         {"eps_first": True, "gamma_first": True, "beta_first": True}, True),
    # near misses
    "epsilon after the square root": ((2, 3, 4, 8), [-1], (8,), {"eps_after_sqrt": True},
                                      False),
    "variance over other axes": ((2, 3, 4, 8), [-1], (8,), {"var_axes": [2, 3]}, False),
    "axes not trailing": ((2, 3, 8, 8), [2], (8,), {}, False),
    "a scale of one element": ((2, 3, 4, 8), [-1], (1,), {}, False),
    "a fourth power": ((2, 3, 4, 8), [-1], (8,), {"power": 4.0}, False),
}


def _numpy(form, x, g, b):
    axes = tuple(FORMS[form][1])
    d = x - x.mean(axis=axes, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + 1e-5) * g + b


@pytest.mark.parametrize("form", FORMS)
def test_forms_and_near_misses(form):
    before = _chain(form)
    after = ComposeLayerNorm()(before)
    ops = [bd.value.op.name for bd in after["main"].body.blocks[0].bindings]
    if not FORMS[form][-1]:
        assert after is before
        return
    assert ops == ["relax.nn.layer_norm"], ops
    rng = np.random.default_rng(2)
    x = rng.standard_normal(FORMS[form][0]).astype("float32") * 3 + 1
    g, b = (rng.standard_normal(FORMS[form][2]).astype("float32") for _ in range(2))
    vm = relax.VirtualMachine(relax.build(after), rvm.cpu())
    np.testing.assert_allclose(vm["main"](x, g, b).numpy(), _numpy(form, x, g, b),
                               rtol=1e-4, atol=1e-4)


def test_a_difference_used_elsewhere_stays():
    # the rewrite replaces the root; the difference another output reads is kept
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 8), "float32"))
    g, b = (relax.Var(n, relax.TensorStructInfo((8,), "float32")) for n in "gb")
    with bb.function("main", [x, g, b]):
        with bb.dataflow():
            d = bb.emit(op.subtract(x, op.mean(x, axis=[-1], keepdims=True)))
            v = bb.emit(op.mean(op.power(d, relax.const(2.0, "float32")), axis=[-1],
                                keepdims=True))
            n = bb.emit(op.divide(d, op.sqrt(op.add(v, relax.const(1e-5, "float32")))))
            y = bb.emit(op.add(op.multiply(n, g), b))
            out = bb.emit_output(relax.Tuple([y, d]))
        bb.emit_func_output(out)
    ops = [bd.value.op.name for bd in ComposeLayerNorm()(bb.get())["main"].body.blocks[0]
           .bindings if hasattr(bd.value, "op")]
    assert "relax.nn.layer_norm" in ops and "relax.subtract" in ops


def _rms_chain(form):
    """x -> the RMS normalization of ``form`` (RMS_FORMS), weight w."""
    shape, wshape, kw = RMS_FORMS[form][:3]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(shape, "float32"))
    w = relax.Var("w", relax.TensorStructInfo(wshape, "float32"))
    f32 = lambda v: relax.const(v, "float32")  # noqa: E731
    with bb.function("main", [x, w]):
        with bb.dataflow():
            other = bb.emit(op.add(x, f32(1.0)))
            sq = op.multiply(x, other if kw.get("square") == "other" else x) \
                if kw.get("square") in ("product", "other") else \
                op.power(x, f32(kw.get("power", 2.0)))
            ms = bb.emit(op.mean(sq, axis=kw.get("axes", [-1]), keepdims=True))
            eps = f32(1e-6)
            if kw.get("eps_after_sqrt"):
                den = bb.emit(op.add(op.sqrt(ms), eps))
            else:
                den = bb.emit(op.sqrt(op.add(eps, ms) if kw.get("eps_first") else op.add(ms, eps)))
            top = other if kw.get("numerator") == "other" else x
            if kw.get("divide"):
                n = bb.emit(op.divide(top, den))
            else:
                recip = bb.emit(op.divide(f32(kw.get("one", 1.0)), den))
                n = bb.emit(op.multiply(recip, top) if kw.get("recip_first")
                            else op.multiply(top, recip))
            y = op.multiply(w, n) if kw.get("weight_first") else op.multiply(n, w)
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


RMS_FORMS = {  # name: (x shape, weight shape, options, rewritten)
    "reciprocal (Llama export)": ((2, 3, 8), (8,), {}, True),
    "divide": ((2, 3, 8), (8,), {"divide": True}, True),
    "square as a product, operands swapped": (
        (2, 3, 8), (8,), {"square": "product", "eps_first": True, "recip_first": True,
                          "weight_first": True}, True),
    "last two axes": ((2, 3, 8), (3, 8), {"axes": [1, 2]}, True),
    # near misses
    "epsilon after the square root": ((2, 3, 8), (8,), {"eps_after_sqrt": True}, False),
    "a product of two tensors": ((2, 3, 8), (8,), {"square": "other"}, False),
    "another numerator": ((2, 3, 8), (8,), {"numerator": "other"}, False),
    "half the reciprocal": ((2, 3, 8), (8,), {"one": 2.0}, False),
    "a cube": ((2, 3, 8), (8,), {"power": 3.0}, False),
    "axes not trailing": ((2, 8, 8), (8,), {"axes": [1]}, False),
    "a weight of one element": ((2, 3, 8), (1,), {}, False),
}


@pytest.mark.parametrize("form", RMS_FORMS)
def test_rms_forms_and_near_misses(form):
    before = _rms_chain(form)
    after = ComposeLayerNorm()(before)
    ops = [bd.value.op.name for bd in after["main"].body.blocks[0].bindings]
    if not RMS_FORMS[form][-1]:
        assert "relax.nn.rms_norm" not in ops, ops
        return
    assert ops == ["relax.nn.rms_norm"], ops
    shape, wshape, kw = RMS_FORMS[form][:3]
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype("float32") * 3
    w = rng.standard_normal(wshape).astype("float32")
    axes = tuple(kw.get("axes", [-1]))
    want = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + 1e-6) * w
    vm = relax.VirtualMachine(relax.build(after), rvm.cpu())
    np.testing.assert_allclose(vm["main"](x, w).numpy(), want, rtol=1e-4, atol=1e-4)



FUNCTION_FORM = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 5, 8), "float32"), g: R.Tensor((8,), "float32"),
             b: R.Tensor((8,), "float32")):
        with R.dataflow():
            x2 = R.reshape(x, R.shape([15, 8]))
            m = R.mean(x2, axis=[1], keepdims=True)
            sq = R.multiply(x2, x2)
            ms = R.mean(sq, axis=[1], keepdims=True)
            mm = R.multiply(m, m)
            v = R.subtract(ms, mm)
            e = R.add(v, R.const(1e-5, "float32"))
            s = R.sqrt(e)
            d = R.subtract(x2, m)
            r = R.divide(R.const(1.0, "float32"), s)
            n = R.multiply(d, r)
            g2 = R.reshape(g, R.shape([1, 8]))
            y0 = R.multiply(n, g2)
            b2 = R.reshape(b, R.shape([1, 8]))
            y1 = R.add(y0, b2)
            y = R.reshape(y1, R.shape([3, 5, 8]))
            R.output(y)
        return y
"""


@I.ir_module
class FunctionFormComposed:
    @R.function
    def main(x: R.Tensor((3, 5, 8), "float32"), g: R.Tensor((8,), "float32"),
             b: R.Tensor((8,), "float32")):
        with R.dataflow():
            x2 = R.reshape(x, R.shape([15, 8]))
            y1 = R.nn.layer_norm(x2, g, b, axes=[1], epsilon=9.999999747378752e-06)
            y = R.reshape(y1, R.shape([3, 5, 8]))
            R.output(y)
        return y


def test_the_onnx_function_form_becomes_one_layer_norm():
    """ONNX's LayerNormalization function body as imported (axis -1 of a (3, 5, 8) tensor):
    flattened to 2-d, E[x^2] - E[x]^2, Reciprocal, the scale and bias flattened to (1, 8)."""
    after = ComposeLayerNorm()(from_source(FUNCTION_FORM))
    assert_structural_equal(after, FunctionFormComposed)
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((3, 5, 8)) * 2 + 1).astype("float32")
    g, b = (rng.standard_normal(8).astype("float32") for _ in range(2))
    want = _numpy("last axis", x, g, b)
    for engine in ("python", "native"):
        vm = relax.VirtualMachine(relax.build(after), rvm.cpu(), engine=engine)
        np.testing.assert_allclose(vm["main"](x, g, b).numpy(), want, rtol=1e-4, atol=1e-4)


FUNCTION_NEAR_MISSES = {  # name: (line of FUNCTION_FORM, its replacement)
    "the square of another mean": ("mm = R.multiply(m, m)", "mm = R.multiply(ms, ms)"),
    "a scale computed from the parameter": (
        "g2 = R.reshape(g, R.shape([1, 8]))", "g2 = R.exp(R.reshape(g, R.shape([1, 8])))"),
    "twice the reciprocal": ('r = R.divide(R.const(1.0, "float32"), s)',
                             'r = R.divide(R.const(2.0, "float32"), s)'),
    "the mean of the difference's square minus the mean's": (
        "v = R.subtract(ms, mm)", "v = R.subtract(mm, ms)"),
}


@pytest.mark.parametrize("name", FUNCTION_NEAR_MISSES)
def test_function_form_near_misses_are_left(name):
    old, new = FUNCTION_NEAR_MISSES[name]
    assert old in FUNCTION_FORM
    before = from_source(FUNCTION_FORM.replace(old, new))
    ops = [bd.value.op.name for bd in ComposeLayerNorm()(before)["main"].body.blocks[0].bindings
           if hasattr(bd.value, "op")]
    assert "relax.nn.layer_norm" not in ops, ops


def test_the_function_form_over_two_axes_reshapes_its_scale():
    """axis 1 of a (2, 3, 5) tensor: the statistics over 15 elements, the (3, 5) scale and
    bias flattened to (1, 15); they reach layer_norm as (15,) tensors."""
    source = (FUNCTION_FORM.replace("R.Tensor((3, 5, 8)", "R.Tensor((2, 3, 5)")
              .replace('g: R.Tensor((8,), "float32")', 'g: R.Tensor((3, 5), "float32")')
              .replace('b: R.Tensor((8,), "float32")', 'b: R.Tensor((3, 5), "float32")')
              .replace("[15, 8]", "[2, 15]").replace("[1, 8]", "[1, 15]")
              .replace("[3, 5, 8]", "[2, 3, 5]"))
    after = ComposeLayerNorm()(from_source(source))
    ops = [bd.value.op.name for bd in after["main"].body.blocks[0].bindings]
    assert ops == ["relax.reshape", "relax.reshape", "relax.reshape", "relax.nn.layer_norm",
                   "relax.reshape"], ops
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((2, 3, 5)) * 2 + 1).astype("float32")
    g, b = (rng.standard_normal((3, 5)).astype("float32") for _ in range(2))
    d = x - x.mean(axis=(1, 2), keepdims=True)
    want = d / np.sqrt((d * d).mean(axis=(1, 2), keepdims=True) + 1e-5) * g + b
    vm = relax.VirtualMachine(relax.build(after), rvm.cpu())
    np.testing.assert_allclose(vm["main"](x, g, b).numpy(), want, rtol=1e-4, atol=1e-4)
