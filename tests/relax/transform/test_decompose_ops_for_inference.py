"""DecomposeOpsForInference: an inference batch norm becomes a per-channel scale and shift,
folded at build when the statistics are bound."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.bytecode.constants import constant_tag
from rvm.ir.base import assert_structural_equal
from rvm.relax.transform.decompose_ops_for_inference import DecomposeOpsForInference
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.tir.function import PrimFunc


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), "float32"), g: R.Tensor((3,), "float32"),
             b: R.Tensor((3,), "float32"), m: R.Tensor((3,), "float32"),
             v: R.Tensor((3,), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, g, b, m, v, axis=1, epsilon=1e-3, training=False)
            y = bn[0]
            R.output(y)
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((2, 3, 4, 5), "float32"), g: R.Tensor((3,), "float32"),
             b: R.Tensor((3,), "float32"), m: R.Tensor((3,), "float32"),
             v: R.Tensor((3,), "float32")):
        with R.dataflow():
            e = R.add(v, R.const(1e-3, "float32"))
            root = R.sqrt(e)
            scale = R.divide(g, root)
            ms = R.multiply(m, scale)
            shift = R.subtract(b, ms)
            scale_c = R.expand_dims(scale, axis=[1, 2])
            shift_c = R.expand_dims(shift, axis=[1, 2])
            xs = R.multiply(x, scale_c)
            out = R.add(xs, shift_c)
            bn = (out, m, v)
            y = bn[0]
            R.output(y)
        return y


def test_an_inference_batch_norm_becomes_a_multiply_add_by_channel():
    assert_structural_equal(DecomposeOpsForInference()(Before), Expected)


def _reference(x, g, b, m, v, axis, eps, center=True, scale=True):
    shape = [1] * x.ndim
    shape[axis] = -1
    out = (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + eps)
    if scale:
        out = out * g.reshape(shape)
    if center:
        out = out + b.reshape(shape)
    return out


def _bn_module(shape, axis, center=True, scale=True, training=False, consts=None):
    channels = shape[axis]
    x = relax.Var("x", relax.TensorStructInfo(shape, "float32"))
    params = [relax.Var(n, relax.TensorStructInfo((channels,), "float32"))
              for n in ("g", "b", "m", "v")]
    args = [relax.const(c) for c in consts] if consts is not None else params
    bb = relax.BlockBuilder()
    with bb.function("main", [x] + ([] if consts is not None else params)):
        with bb.dataflow():
            bn = bb.emit(relax.op.nn.batch_norm(x, *args, axis=axis, epsilon=1e-5,
                                                center=center, scale=scale, training=training))
            gv = bb.emit_output(relax.TupleGetItem(bn, 0))
        bb.emit_func_output(gv)
    return bb.get()


def _stats(rng, channels):
    return [rng.standard_normal(channels).astype("float32"),
            rng.standard_normal(channels).astype("float32"),
            rng.standard_normal(channels).astype("float32"),
            rng.uniform(0.5, 2.0, channels).astype("float32")]


@pytest.mark.parametrize("shape,axis,center,scale", [
    ((2, 3, 5, 7), 1, True, True),
    ((1, 7, 6), -1, True, True),     # channels last: no expand_dims
    ((3, 5), 1, False, True),
    ((2, 4, 3, 3), 1, True, False),
])
def test_numerics_match_batch_norm_with_run_time_statistics(shape, axis, center, scale):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype("float32")
    stats = _stats(rng, shape[axis])
    mod = DecomposeOpsForInference()(_bn_module(shape, axis, center, scale))
    assert "relax.nn.batch_norm" not in mod["main"].script()
    vm = relax.VirtualMachine(relax.build(mod, target="c"), rvm.cpu())
    out = vm["main"](rvm.nd.array(x), *[rvm.nd.array(s) for s in stats]).numpy()
    np.testing.assert_allclose(out, _reference(x, *stats, axis % len(shape), 1e-5, center,
                                               scale), rtol=1e-5, atol=1e-5)


def test_bound_statistics_fold_to_a_scale_and_shift_in_the_executables_constants():
    rng = np.random.default_rng(3)
    shape = (2, 5, 4, 4)
    g, b, m, v = stats = _stats(rng, 5)
    mod = _bn_module(shape, 1, consts=stats)
    ex = relax.build(mod, target="c")
    lowered = relax.get_pipeline("default")(mod)
    names = [gv.name_hint for gv, f in lowered.functions.items() if isinstance(f, PrimFunc)]
    assert not [n for n in names if "batch_norm" in n or "sqrt" in n or "divide" in n], names
    arrays = [c.numpy() for c in ex.constants if constant_tag(c) == "ndarray"]
    scale = (g / np.sqrt(v + np.float32(1e-5))).reshape(5, 1, 1)
    shift = (b - m * scale.reshape(5)).reshape(5, 1, 1)
    assert any(a.shape == (5, 1, 1) and np.allclose(a, scale, rtol=1e-6) for a in arrays)
    assert any(a.shape == (5, 1, 1) and np.allclose(a, shift, rtol=1e-6, atol=1e-7)
               for a in arrays)
    x = rng.standard_normal(shape).astype("float32")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](rvm.nd.array(x)).numpy()
    np.testing.assert_allclose(out, _reference(x, g, b, m, v, 1, 1e-5), rtol=1e-5, atol=1e-5)


def test_a_training_batch_norm_is_left_as_it_is():
    mod = _bn_module((2, 3, 4), 1, training=True)
    assert DecomposeOpsForInference()(mod) is mod
