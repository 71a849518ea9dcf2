"""Scatters and gather_nd: scatter_elements, scatter_nd (TVM's names) and gather_nd.

>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> d = Var("d", TensorStructInfo((4, 3), "float32"))
>>> i = Var("i", TensorStructInfo((2, 1), "int64"))
>>> gather_nd(d, i).attrs["batch_dims"]
0
"""
from rvm.relax.expr import Call
from rvm.relax.op.attrs import int_attr, str_attr
from rvm.relax.op.infer_util import attr, check_arity, normalize_axis, tensor_arg, with_shape
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import TensorStructInfo

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _int_indices(sinfo, name):
    if sinfo.dtype is not None and not (sinfo.dtype.is_int or sinfo.dtype.is_uint):
        raise ValueError(f"{name}: argument 'indices' must be an integer tensor, got "
                         f"{sinfo.dtype}")


def _static_depth(indices, name):
    values = indices.shape_values
    depth = None if values is None or not values else getattr(values[-1], "value", None)
    if not isinstance(depth, int):
        raise ValueError(f"{name}: the last axis of 'indices' must be static, got "
                         f"{None if values is None else [str(v) for v in values]}")
    return depth


def _infer_scatter(name, with_axis):
    def infer(call, ctx):
        check_arity(call, 3, name)
        data = tensor_arg(call, 0, name, "data")
        indices = tensor_arg(call, 1, name, "indices")
        updates = tensor_arg(call, 2, name, "updates")
        _int_indices(indices, name)
        if data.dtype is not None and updates.dtype is not None and \
                data.dtype != updates.dtype:
            raise ValueError(f"{name}: 'updates' must have the dtype of 'data' ({data.dtype}), "
                             f"got {updates.dtype}")
        if with_axis:
            for arg, sinfo in (("indices", indices), ("updates", updates)):
                if -1 not in (data.ndim, sinfo.ndim) and sinfo.ndim != data.ndim:
                    raise ValueError(f"{name}: '{arg}' must have the rank of 'data' "
                                     f"({data.ndim}), got rank {sinfo.ndim}")
            if data.ndim != -1:
                normalize_axis(attr(call, "axis"), data.ndim, name)
        elif -1 not in (data.ndim, indices.ndim, updates.ndim):
            depth = _static_depth(indices, name)
            want = indices.ndim - 1 + data.ndim - depth
            if depth > data.ndim or updates.ndim != want:
                raise ValueError(f"{name}: indices of depth {depth} into data of rank "
                                 f"{data.ndim} need updates of rank {want}, got rank "
                                 f"{updates.ndim}")
        return data

    return infer


register_op("relax.scatter_elements", _infer_scatter("relax.scatter_elements", True),
            description="write updates at indices along an axis",
            attrs={"axis": 0, "reduction": "none"})
register_op("relax.scatter_nd", _infer_scatter("relax.scatter_nd", False),
            description="write slices of updates at n-dimensional indices",
            attrs={"reduction": "none"})


def scatter_elements(data, indices, updates, axis=0, reduction="none"):
    """``data`` with ``updates[u]`` written (or combined by ``reduction``: add, mul, max,
    min) at ``u`` with ``u[axis]`` replaced by ``indices[u]``, in order; a negative index
    counts from the end, one outside ``[-n, n)`` fails the call with an IndexError
    (``relax.scatter_elements``)."""
    name = "relax.scatter_elements"
    return Call(Op.get(name), [data, indices, updates], attrs={
        "axis": int_attr(axis, name, "axis"),
        "reduction": str_attr(reduction, name, "reduction", REDUCTIONS)})


def scatter_nd(data, indices, updates, reduction="none"):
    """``data`` with the slice ``updates[u]`` written (or combined by ``reduction``) at
    ``data[indices[u]]`` for every ``u`` of ``indices.shape[:-1]``, in order; indices are
    read as in ``scatter_elements`` (``relax.scatter_nd``)."""
    name = "relax.scatter_nd"
    return Call(Op.get(name), [data, indices, updates], attrs={
        "reduction": str_attr(reduction, name, "reduction", REDUCTIONS)})


def _infer_gather_nd(call, ctx):
    name = "relax.gather_nd"
    check_arity(call, 2, name)
    data = tensor_arg(call, 0, name, "data")
    indices = tensor_arg(call, 1, name, "indices")
    _int_indices(indices, name)
    batch = attr(call, "batch_dims")
    if data.ndim == -1 or indices.ndim == -1:
        return TensorStructInfo(None, data.dtype)
    depth = _static_depth(indices, name)
    if batch < 0 or batch + depth > data.ndim or batch >= indices.ndim:
        raise ValueError(f"{name}: {batch} batch axes and indices of depth {depth} do not fit "
                         f"data of rank {data.ndim} and indices of rank {indices.ndim}")
    dv, iv = data.shape_values, indices.shape_values
    if dv is None:
        return TensorStructInfo(None, data.dtype, indices.ndim - 1 + data.ndim - batch - depth)
    return with_shape(data, list(iv[:-1]) + list(dv[batch + depth:]))


register_op("relax.gather_nd", _infer_gather_nd, description="gather at n-dimensional indices",
            attrs={"batch_dims": 0})


def gather_nd(data, indices, batch_dims=0):
    """``out[b, u, r] = data[b, indices[b, u], r]``: ``batch_dims`` leading axes shared,
    ``indices[b, u]`` addressing the next ``indices.shape[-1]`` axes; indices are read as
    in ``scatter_elements`` (``relax.gather_nd``)."""
    name = "relax.gather_nd"
    return Call(Op.get(name), [data, indices],
                attrs={"batch_dims": int_attr(batch_dims, name, "batch_dims")})
