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
- the variance is ``mean(d ** 2)`` (``power(d, 2)`` or ``d * d`` of the same difference)
  or ``mean(x ** 2) - mean ** 2``;
- the normalized value is ``d / sqrt(var + eps)`` or ``d * reciprocal(sqrt(var + eps))``;
- ``eps`` is a constant of one element added to the variance (before the square root);
- ``gamma`` and ``beta`` have the shape of the normalized axes and ``x``'s dtype
  (either operand order of the multiply and the add).

ONNX's own definition of LayerNormalization (the function body a runtime without the
operator expands it to) flattens ``x`` to two dimensions and writes the variance as
``mean(x * x) - mean * mean`` and the division as ``* reciprocal(...)``; that form is
composed too, onto the flattened tensor: the scale and bias it flattens to ``(1, D)``
(reshapes of tensors of ``D`` elements) are taken as they were, or reshaped to ``(D,)``
when they span several axes (a constant is reshaped at compile time).
``R.nn.layer_norm`` computes the variance in two passes, the more accurate of the two
equal formulas.

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
from rvm.relax.analysis.var_analysis import get_var2val
from rvm.relax.dpl.pattern import is_const, is_op, wildcard
from rvm.relax.dpl.rewrite import rewrite_call
from rvm.relax.expr import Call, Constant, Var, const
from rvm.relax.op.manipulate import reshape
from rvm.relax.op.nn.normalization import layer_norm, rms_norm
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.dead_code_elimination import remove_unused_bindings
from rvm.relax.transform.function_pass import FunctionPass


def _either(op, a, b):
    """``op(a, b)`` or ``op(b, a)``."""
    return is_op(op)(a, b) | is_op(op)(b, a)


def _square(v):
    """(``v ** 2`` or ``v * v``, the power sub-pattern)."""
    power = is_op("relax.power")(v, is_const())
    return power | is_op("relax.multiply")(v, v), power


def _normalized(diff, den, one):
    """``diff / den`` or ``diff * (one / den)`` (ONNX's Reciprocal is ``1 / den``)."""
    recip = is_op("relax.divide")(one, den)
    return is_op("relax.divide")(diff, den) | _either("relax.multiply", diff, recip), recip


def _pattern():
    """(root pattern, {role: sub-pattern}) of the layer normalization."""
    x, eps, gamma, beta, one = wildcard(), is_const(), wildcard(), wildcard(), is_const()
    mean = is_op("relax.mean")(x)
    diff = is_op("relax.subtract")(x, mean)
    square_d, power_d = _square(diff)
    square_x, power_x = _square(x)
    square_m, power_m = _square(mean)
    var_d = is_op("relax.mean")(square_d)
    mean_sq = is_op("relax.mean")(square_x)
    var = var_d | is_op("relax.subtract")(mean_sq, square_m)
    den = is_op("relax.sqrt")(_either("relax.add", var, eps))
    normed, recip = _normalized(diff, den, one)
    root = _either("relax.add", _either("relax.multiply", normed, gamma), beta)
    return root, {"x": x, "means": (mean, var_d, mean_sq), "powers": (power_d, power_x, power_m),
                  "eps": eps, "params": (gamma, beta), "recip": recip, "one": one}


def _rms_pattern():
    """(root pattern, {role: sub-pattern}) of the RMS normalization."""
    x, eps, weight, one = wildcard(), is_const(), wildcard(), is_const()
    square, power = _square(x)
    ms = is_op("relax.mean")(square)
    den = is_op("relax.sqrt")(_either("relax.add", ms, eps))
    normed, recip = _normalized(x, den, one)
    root = _either("relax.multiply", normed, weight)
    return root, {"x": x, "means": (ms,), "powers": (power,), "eps": eps,
                  "params": (weight,), "recip": recip, "one": one}


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


def _dims(expr, dtype):
    sinfo = expr.struct_info_
    if not isinstance(sinfo, TensorStructInfo) or str(sinfo.dtype) != str(dtype):
        return None
    return sinfo.shape_values


def _param(expr, dims, dtype, var2val):
    """The tensor of shape ``dims`` (the normalized axes) that ``expr`` is, or that ``expr``
    reshapes to ones followed by ``dims`` (ONNX's ``Flatten(scale, axis=0)``): the tensor
    itself, or a constant of the same elements in shape ``dims``; else None."""
    shape = _dims(expr, dtype)
    if shape is None:
        return None
    if _same_dims(shape, dims):
        return expr
    lead = len(shape) - len(dims)
    value = var2val.get(expr) if isinstance(expr, Var) else expr
    if not (lead > 0 and _same_dims(shape[lead:], dims) and
            all(getattr(d, "value", None) == 1 for d in shape[:lead]) and
            isinstance(value, Call) and isinstance(value.op, Op) and
            value.op.name == "relax.reshape"):
        return None
    inner = value.args[0]
    inner_dims = _dims(inner, dtype)
    if inner_dims is not None and _same_dims(inner_dims, dims):
        return inner
    sizes = [getattr(d, "value", None) for d in dims]
    if inner_dims is None or None in sizes or None in [getattr(d, "value", None)
                                                       for d in inner_dims]:
        return None
    if int(np.prod([d.value for d in inner_dims])) != int(np.prod(sizes)):
        return None
    # a scale over several axes, flattened (LayerNormalization with axis < -1)
    if isinstance(inner, Constant):
        return const(inner.data.numpy().reshape(sizes))
    return reshape(inner, sizes)


def _checked(found, var2val):
    """(axes, eps, params) when the matched chain normalizes ``found["x"]`` (a float tensor
    of known shape) over trailing axes that each of its means reduces, with squares that are
    squares, ``1 / den`` for a reciprocal, a finite one-element ``eps`` and parameters of the
    normalized axes' shape and x's dtype (module docstring); else None."""
    sinfo = found["x"].struct_info_
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim < 1 or sinfo.shape_values is None \
            or not str(sinfo.dtype).startswith("float"):
        return None
    ndim, dims = sinfo.ndim, sinfo.shape_values
    means = [m for m in found["means"] if m is not None]
    axes = _reduced_axes(means[0], ndim)
    if axes is None or axes != list(range(ndim - len(axes), ndim)) or \
            any(_reduced_axes(m, ndim) != axes for m in means[1:]):
        return None
    if any(p is not None and _one_value(p.args[1]) != 2.0 for p in found["powers"]):
        return None
    if found["recip"] is not None and _one_value(found["one"]) != 1.0:
        return None
    eps = _one_value(found["eps"])
    if eps is None or not np.isfinite(eps):
        return None
    params = [_param(p, dims[axes[0]:], sinfo.dtype, var2val) for p in found["params"]]
    if any(p is None for p in params):
        return None
    return axes, eps, params


def _found(matches, roles):
    return {role: tuple(matches.get(p) for p in pattern) if isinstance(pattern, tuple)
            else matches.get(pattern) for role, pattern in roles.items()}


def _rewrite(value, matches, roles, var2val):
    found = _found(matches, roles)
    checked = _checked(found, var2val)
    if checked is None:
        return value
    axes, eps, (gamma, beta) = checked
    return layer_norm(found["x"], gamma, beta, axes=axes, epsilon=eps)


def _rewrite_rms(value, matches, roles, var2val):
    found = _found(matches, roles)
    checked = _checked(found, var2val)
    if checked is None:
        return value
    axes, eps, (weight,) = checked
    return rms_norm(found["x"], weight, axes=axes, epsilon=eps)


def compose_layer_norm(func, mod=None):
    """``func`` with every spelled-out layer normalization as ``R.nn.layer_norm`` and RMS
    normalization as ``R.nn.rms_norm`` (module docstring), its unused bindings removed."""
    rewritten = []
    new = func
    for pattern, rewrite in ((_pattern, _rewrite), (_rms_pattern, _rewrite_rms)):
        root, roles = pattern()
        var2val = get_var2val(new)

        def rewriter(value, matches, roles=roles, rewrite=rewrite, var2val=var2val):
            out = rewrite(value, matches, roles, var2val)
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
