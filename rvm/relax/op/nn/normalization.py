"""Normalization: ``R.nn.batch_norm``, ``R.nn.layer_norm``, ``R.nn.group_norm`` and
``R.nn.rms_norm``. Each keeps its data's struct info; the scale and shift parameters must
match the normalized axes.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((2, 8), "float32"))
>>> g = Var("g", TensorStructInfo((8,), "float32"))
>>> layer_norm(x, g, g, axes=-1).attrs
{'axes': (-1,), 'epsilon': 1e-05, 'center': True, 'scale': True}
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import axes_attr, bool_attr, float_attr, int_attr
from rvm.relax.op.infer_util import (
    attr,
    check_arity,
    check_float,
    dim_value,
    dims_text,
    normalize_axes,
    normalize_axis,
    same_dim,
    tensor_arg,
    unify_dtype,
)
from rvm.relax.op.registry import REQUIRED, Op, register_op
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo


def _check_param(call, index, name, op_name, dims, dtype):
    """Argument ``index`` (called ``name``) must be a tensor of shape ``dims`` (a list of
    dimensions, or None when unknown) and of ``dtype``."""
    sinfo = tensor_arg(call, index, op_name, name)
    unify_dtype(dtype, sinfo.dtype, op_name)
    if dims is None:
        return sinfo
    if sinfo.ndim not in (-1, len(dims)):
        raise ValueError(f"{op_name}: argument '{name}' expects a rank-{len(dims)} tensor of "
                         f"shape {dims_text(dims)}, got rank {sinfo.ndim}")
    values = sinfo.shape_values
    if values is not None:
        for got, want in zip(values, dims):
            if not same_dim(got, want) and dim_value(got) is not None and \
                    dim_value(want) is not None:
                raise ValueError(f"{op_name}: argument '{name}' expects shape {dims_text(dims)}, "
                                 f"got {dims_text(values)}")
    return sinfo


def _data_dims(data, axes):
    values = data.shape_values
    return None if values is None else [values[a] for a in axes]


def _infer_layer_norm(call, ctx):
    name = "relax.nn.layer_norm"
    check_arity(call, 3, name)
    data = tensor_arg(call, 0, name, "data")
    check_float(data, name)
    if data.ndim == -1:
        return data
    axes = normalize_axes(attr(call, "axes"), data.ndim, name)
    for index, param in ((1, "gamma"), (2, "beta")):
        _check_param(call, index, param, name, _data_dims(data, axes), data.dtype)
    return data


def _infer_rms_norm(call, ctx):
    name = "relax.nn.rms_norm"
    check_arity(call, 2, name)
    data = tensor_arg(call, 0, name, "data")
    check_float(data, name)
    if data.ndim != -1:
        axes = normalize_axes(attr(call, "axes"), data.ndim, name)
        _check_param(call, 1, "weight", name, _data_dims(data, axes), data.dtype)
    return data


def _channel_dims(data, axis):
    values = data.shape_values
    return None if values is None else [values[axis]]


def _infer_group_norm(call, ctx):
    name = "relax.nn.group_norm"
    check_arity(call, 3, name)
    data = tensor_arg(call, 0, name, "data")
    check_float(data, name)
    groups = attr(call, "num_groups")
    if groups <= 0:
        raise ValueError(f"{name}: 'num_groups' must be positive, got {groups}")
    if data.ndim == -1:
        return data
    channel = normalize_axis(attr(call, "channel_axis"), data.ndim, name)
    axes = normalize_axes(attr(call, "axes"), data.ndim, name)
    if channel in axes:
        raise ValueError(f"{name}: 'axes' {list(attr(call, 'axes'))} must not contain the "
                         f"channel axis {channel}")
    dims = _channel_dims(data, channel)
    if dims is not None and dim_value(dims[0]) is not None and dim_value(dims[0]) % groups:
        raise ValueError(f"{name}: the {dim_value(dims[0])} channels are not divisible by "
                         f"num_groups={groups}")
    for index, param in ((1, "gamma"), (2, "beta")):
        _check_param(call, index, param, name, dims, data.dtype)
    return data


def _infer_batch_norm(call, ctx):
    name = "relax.nn.batch_norm"
    check_arity(call, 5, name)
    data = tensor_arg(call, 0, name, "data")
    check_float(data, name)
    dims = None
    if data.ndim != -1:
        dims = _channel_dims(data, normalize_axis(attr(call, "axis"), data.ndim, name))
    params = [_check_param(call, index, param, name, dims, data.dtype)
              for index, param in enumerate(("gamma", "beta", "moving_mean", "moving_var"), 1)]
    stat = TensorStructInfo(dims, data.dtype) if dims is not None else \
        TensorStructInfo(None, data.dtype, 1)
    if dims is None and params[2].shape_values is not None:
        stat = params[2]
    return TupleStructInfo([data, stat, stat])


_COMMON = {"epsilon": 1e-5, "center": True, "scale": True}
register_op("relax.nn.layer_norm", _infer_layer_norm, description="layer normalization",
            attrs={"axes": REQUIRED, **_COMMON})
register_op("relax.nn.rms_norm", _infer_rms_norm, description="root mean square normalization",
            attrs={"axes": (-1,), "epsilon": 1e-5})
register_op("relax.nn.group_norm", _infer_group_norm, description="group normalization",
            attrs={"num_groups": REQUIRED, "channel_axis": REQUIRED, "axes": REQUIRED,
                   **_COMMON})
register_op("relax.nn.batch_norm", _infer_batch_norm,
            description="batch normalization: (output, new moving mean, new moving variance)",
            attrs={"axis": REQUIRED, **_COMMON, "momentum": 0.1, "training": True})


def _common(name, epsilon, center, scale):
    return {"epsilon": float_attr(epsilon, name, "epsilon"),
            "center": bool_attr(center, name, "center"),
            "scale": bool_attr(scale, name, "scale")}


def layer_norm(data, gamma, beta, axes, epsilon=1e-5, center=True, scale=True):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` with the statistics over ``axes``;
    ``gamma``/``beta`` have the shape of those axes (``relax.nn.layer_norm``)."""
    name = "relax.nn.layer_norm"
    return Call(Op.get(name), [data, gamma, beta], attrs={
        "axes": axes_attr(axes, name, "axes"), **_common(name, epsilon, center, scale)})


def group_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon=1e-5, center=True,
               scale=True):
    """Layer normalization within each of ``num_groups`` groups of the channels on
    ``channel_axis``, the statistics also over ``axes``; ``gamma``/``beta`` are per channel
    (``relax.nn.group_norm``)."""
    name = "relax.nn.group_norm"
    return Call(Op.get(name), [data, gamma, beta], attrs={
        "num_groups": int_attr(num_groups, name, "num_groups"),
        "channel_axis": int_attr(channel_axis, name, "channel_axis"),
        "axes": axes_attr(axes, name, "axes"), **_common(name, epsilon, center, scale)})


def rms_norm(data, weight, axes=-1, epsilon=1e-5):
    """``x / sqrt(mean(x * x) + epsilon) * weight`` with the mean over ``axes``
    (``relax.nn.rms_norm``)."""
    name = "relax.nn.rms_norm"
    return Call(Op.get(name), [data, weight], attrs={
        "axes": axes_attr(axes, name, "axes"), "epsilon": float_attr(epsilon, name, "epsilon")})


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis, epsilon=1e-5, center=True,
               scale=True, momentum=0.1, training=True):
    """Batch normalization over every axis but ``axis`` (the channels); a tuple of the output
    and the new moving mean and variance. With ``training`` the batch's statistics normalize
    and update the moving ones (``moving * (1 - momentum) + batch * momentum``); without it
    the moving statistics normalize and come back unchanged (``relax.nn.batch_norm``)."""
    name = "relax.nn.batch_norm"
    return Call(Op.get(name), [data, gamma, beta, moving_mean, moving_var], attrs={
        "axis": int_attr(axis, name, "axis"), **_common(name, epsilon, center, scale),
        "momentum": float_attr(momentum, name, "momentum"),
        "training": bool_attr(training, name, "training")})
