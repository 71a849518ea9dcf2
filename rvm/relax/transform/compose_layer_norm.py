"""ComposeLayerNorm: a layer (or RMS) normalization spelled out op by op becomes
``R.nn.layer_norm`` (``R.nn.rms_norm``).

ONNX has no LayerNormalization before opset 17, so ``torch.onnx.export`` at an older
opset (and hand-written models at any) write it as its formula::

    mean = mean(x, axes, keepdims=True)
    d    = x - mean
    var  = mean(d ** 2, axes, keepdims=True)        (or d * d)
    y    = d / sqrt(var + eps) * gamma + beta

Legalized op by op, that is three kernels (the mean and the difference, the square, the
rest) writing two intermediate tensors of the input's size; ``R.nn.layer_norm`` is one
kernel the default schedule reads twice (rvm.topi.nn.norm: the same two-pass statistics).
This pass rewrites the chain (rvm.relax.dpl.rewrite_call) when

- both means reduce the same trailing axes of ``x`` with ``keepdims``;
- the square is ``power(d, 2)`` or ``d * d`` of the same difference;
- ``eps`` is a constant of one element added to the variance (before the square root);
- ``gamma`` and ``beta`` have the shape of the normalized axes and ``x``'s dtype
  (either operand order of the multiply and the add).

Llama-style RMS normalization (no RMSNormalization before opset 23) is spelled out the
same way and becomes ``R.nn.rms_norm(x, weight, axes, eps)``::

    ms = mean(x ** 2, axes, keepdims=True)          (or x * x)
    y  = x * reciprocal(sqrt(ms + eps)) * weight    (or x / sqrt(ms + eps); either order)

with the same conditions on the axes, the square, ``eps`` and ``weight``.

Anything else (an epsilon added after the square root, a mean over other axes, a scale of
another shape) is left as it is. The bindings the rewrite no longer needs are removed.

>>> from rvm.relax.block_builder import BlockBuilder
>>> from rvm.relax.expr import Var, const
>>> from rvm.relax import op
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((2, 8), "float32"))
>>> g, b = (Var(n, TensorStructInfo((8,), "float32")) for n in "gb")
>>> bb = BlockBuilder()
>>> with bb.function("main", [x, g, b]):
...     with bb.dataflow():
...         d = bb.emit(op.subtract(x, op.mean(x, axis=[-1], keepdims=True)))
...         v = bb.emit(op.mean(op.power(d, const(2.0, "float32")), axis=[-1], keepdims=True))
...         n = bb.emit(op.divide(d, op.sqrt(op.add(v, const(1e-5, "float32")))))
...         gv = bb.emit_output(op.add(op.multiply(n, g), b))
...     _ = bb.emit_func_output(gv)
>>> mod = ComposeLayerNorm()(bb.get())
>>> [b.value.op.name for b in mod["main"].body.blocks[0].bindings]
['relax.nn.layer_norm']
"""
import numpy as np

from rvm.ir.transform import PassInfo
from rvm.relax.dpl.pattern import is_const, is_op, wildcard
from rvm.relax.dpl.rewrite import rewrite_call
from rvm.relax.expr import Constant
from rvm.relax.op.nn.normalization import layer_norm, rms_norm
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.dead_code_elimination import remove_unused_bindings
from rvm.relax.transform.function_pass import FunctionPass


def _either(op, a, b):
    """``op(a, b)`` or ``op(b, a)``."""
    return is_op(op)(a, b) | is_op(op)(b, a)


def _pattern():
    """(root pattern, {role: sub-pattern})."""
    x, eps, gamma, beta = wildcard(), is_const(), wildcard(), wildcard()
    mean = is_op("relax.mean")(x)
    diff = is_op("relax.subtract")(x, mean)
    power = is_op("relax.power")(diff, is_const())
    square = power | is_op("relax.multiply")(diff, diff)
    var = is_op("relax.mean")(square)
    normed = is_op("relax.divide")(diff, is_op("relax.sqrt")(_either("relax.add", var, eps)))
    root = _either("relax.add", _either("relax.multiply", normed, gamma), beta)
    return root, {"x": x, "mean": mean, "power": power, "var": var, "eps": eps,
                  "gamma": gamma, "beta": beta}


def _rms_pattern():
    """(root pattern, {role: sub-pattern}) of the RMS normalization."""
    x, eps, weight, one = wildcard(), is_const(), wildcard(), is_const()
    power = is_op("relax.power")(x, is_const())
    square = power | is_op("relax.multiply")(x, x)
    ms = is_op("relax.mean")(square)
    den = is_op("relax.sqrt")(_either("relax.add", ms, eps))
    recip = is_op("relax.divide")(one, den)
    normed = is_op("relax.divide")(x, den) | _either("relax.multiply", x, recip)
    root = _either("relax.multiply", normed, weight)
    return root, {"x": x, "power": power, "ms": ms, "eps": eps, "weight": weight,
                  "recip": recip, "one": one}


def _one_value(expr):
    """The float of a constant of one element, or None."""
    if not isinstance(expr, Constant):
        return None
    values = expr.data.numpy()
    return float(values.reshape(-1)[0]) if values.size == 1 else None


def _reduced_axes(call, ndim):
    """The sorted axes a ``relax.mean`` with ``keepdims`` reduces, or None."""
    attrs = call.attrs or {}
    if not attrs.get("keepdims") or attrs.get("axis") is None:
        return None
    return sorted(int(a) % ndim for a in attrs["axis"])


def _same_dims(a, b):
    return len(a) == len(b) and all(
        getattr(p, "value", p) == getattr(q, "value", q) or p is q for p, q in zip(a, b))


def _checked(found, means, params):
    """(axes, eps) when the matched chain is a normalization of ``found["x"]`` (a float
    tensor of known shape) over trailing axes that every mean in ``means`` reduces, with a
    square that is a square, a finite one-element ``eps`` and parameters ``params`` of the
    normalized axes' shape and x's dtype; else None."""
    sinfo = found["x"].struct_info_
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim < 1 or sinfo.shape_values is None \
            or not str(sinfo.dtype).startswith("float"):
        return None
    ndim, dims = sinfo.ndim, sinfo.shape_values
    axes = _reduced_axes(found[means[0]], ndim)
    if axes is None or axes != list(range(ndim - len(axes), ndim)) or \
            any(_reduced_axes(found[m], ndim) != axes for m in means[1:]):
        return None
    power = found["power"]  # None when the square is a product
    if power is not None and _one_value(power.args[1]) != 2.0:
        return None
    eps = _one_value(found["eps"])
    if eps is None or not np.isfinite(eps):
        return None
    for role in params:
        p = found[role].struct_info_
        if not isinstance(p, TensorStructInfo) or str(p.dtype) != str(sinfo.dtype) or \
                p.shape_values is None or not _same_dims(p.shape_values, dims[axes[0]:]):
            return None
    return axes, eps


def _rewrite(value, matches, roles):
    found = {role: matches.get(pattern) for role, pattern in roles.items()}
    checked = _checked(found, ("mean", "var"), ("gamma", "beta"))
    if checked is None:
        return value
    axes, eps = checked
    return layer_norm(found["x"], found["gamma"], found["beta"], axes=axes, epsilon=eps)


def _rewrite_rms(value, matches, roles):
    found = {role: matches.get(pattern) for role, pattern in roles.items()}
    checked = _checked(found, ("ms",), ("weight",))
    if checked is None or (found["recip"] is not None and _one_value(found["one"]) != 1.0):
        return value
    axes, eps = checked
    return rms_norm(found["x"], found["weight"], axes=axes, epsilon=eps)


def compose_layer_norm(func, mod=None):
    """``func`` with every spelled-out layer normalization as ``R.nn.layer_norm`` and RMS
    normalization as ``R.nn.rms_norm`` (module docstring), its unused bindings removed."""
    rewritten = []
    new = func
    for pattern, rewrite in ((_pattern, _rewrite), (_rms_pattern, _rewrite_rms)):
        root, roles = pattern()

        def rewriter(value, matches, roles=roles, rewrite=rewrite):
            out = rewrite(value, matches, roles)
            if out is not value:
                rewritten.append(out)
            return out

        new = rewrite_call(root, rewriter, new)
    return remove_unused_bindings(new, mod) if rewritten else func


def ComposeLayerNorm():  # noqa: N802  (passes are CamelCase factories)
    """A pass rewriting ``(x - mean) / sqrt(var + eps) * gamma + beta`` spelled out op by
    op into ``R.nn.layer_norm``, and ``x / sqrt(mean(x ** 2) + eps) * weight`` into
    ``R.nn.rms_norm`` (module docstring)."""
    return FunctionPass(lambda func, mod, ctx: compose_layer_norm(func, mod),
                        PassInfo(0, "ComposeLayerNorm"))
