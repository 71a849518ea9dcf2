"""Dense (fully connected) layers and bias addition."""
from rvm.te.operation import compute
from rvm.topi.broadcast import add
from rvm.topi.matmul import matmul
from rvm.topi.utils import named, normalize_axis


def dense(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T (+ bias)``: data (batch, in), weight (out, in), bias (out,).

    The weight is marked layout-free (``layout_free_buffers`` of the kernel).

    >>> from rvm.te.operation import placeholder
    >>> Y = dense(placeholder((1, 784), name="x"), placeholder((128, 784), name="w"))
    >>> [d.value for d in Y.shape], Y.name
    ([1, 128], 'T_matmul_NT')
    """
    if len(data.shape) != 2 or len(weight.shape) != 2:
        raise ValueError(f"dense expects 2-D data and weight, got ranks {len(data.shape)} and "
                         f"{len(weight.shape)}")
    out = matmul(data, weight, transpose_b=True, out_dtype=out_dtype)
    out.op.attrs["layout_free_placeholders"] = [weight]
    if bias is not None:
        out = add(out, bias)
    return out


def bias_add(data, bias, axis=1):
    """``data + bias`` with the 1-D ``bias`` along ``axis`` of ``data``.

    >>> from rvm.te.operation import placeholder
    >>> out = bias_add(placeholder((2, 3, 4), name="x"), placeholder((3,), name="b"))
    >>> [d.value for d in out.shape]
    [2, 3, 4]
    """
    if len(bias.shape) != 1:
        raise ValueError(f"bias_add expects a 1-D bias, got rank {len(bias.shape)}")
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, "bias_add")
    names = [f"ax{k}" for k in range(ndim)]
    return compute(data.shape, named(lambda *i: data[i] + bias[i[axis]], names), name="T_add")
