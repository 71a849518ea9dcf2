"""Broadcasting elementwise operators: arithmetic, comparisons, logical ops, and ``where``."""
from rvm.tir import op as _op
from rvm.te.operation import compute
from rvm.te.tensor import Tensor
from rvm.topi import tag
from rvm.topi.utils import axis_names, const_value, named, same_dim


def broadcast_shape(shape_a, shape_b, what="broadcast"):
    """The numpy-style broadcast of two shapes (right-aligned; 1 stretches).

    Two different symbolic dimensions are assumed equal (the left one is kept).
    """
    ndim = max(len(shape_a), len(shape_b))
    a = [None] * (ndim - len(shape_a)) + list(shape_a)
    b = [None] * (ndim - len(shape_b)) + list(shape_b)
    out = []
    for k, (da, db) in enumerate(zip(a, b)):
        if da is None or const_value(da) == 1:
            out.append(db if db is not None else da)
        elif db is None or const_value(db) == 1 or same_dim(da, db):
            out.append(da)
        elif const_value(da) is not None and const_value(db) is not None:
            raise ValueError(f"{what}: shapes {_text(shape_a)} and {_text(shape_b)} do not "
                             f"broadcast (dimension {k}: {const_value(da)} vs {const_value(db)})")
        else:
            out.append(da)
    return out


def _text(shape):
    return "(" + ", ".join(repr(d) for d in shape) + ")"


def broadcast_index(tensor, out_shape, indices):
    """``tensor``'s element for output ``indices`` (dropped leading axes, stretched 1s)."""
    offset = len(out_shape) - len(tensor.shape)
    idx = []
    for k, dim in enumerate(tensor.shape):
        out_dim = out_shape[offset + k]
        if const_value(dim) == 1 and const_value(out_dim) != 1:
            idx.append(_op.const(0, dim.dtype))
        else:
            idx.append(indices[offset + k])
    return tensor[tuple(idx)]


def _binary(name, fop):
    def build(lhs, rhs):
        if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor):
            return fop(lhs, rhs)
        if not isinstance(rhs, Tensor):
            return compute(lhs.shape, named(lambda *i: fop(lhs[i], rhs),
                                            axis_names("ax", len(lhs.shape))), name=f"T_{name}",
                           tag=tag.BROADCAST)
        if not isinstance(lhs, Tensor):
            return compute(rhs.shape, named(lambda *i: fop(lhs, rhs[i]),
                                            axis_names("ax", len(rhs.shape))), name=f"T_{name}",
                           tag=tag.BROADCAST)
        shape = broadcast_shape(lhs.shape, rhs.shape, name)

        def fcompute(*i):
            return fop(broadcast_index(lhs, shape, i), broadcast_index(rhs, shape, i))

        return compute(shape, named(fcompute, axis_names("ax", len(shape))), name=f"T_{name}",
                       tag=tag.BROADCAST)

    build.__name__ = name
    build.__doc__ = (f"Elementwise {name} of two tensors (or a tensor and a scalar), with "
                     "numpy broadcasting.")
    return build


add = _binary("add", _op.add)
subtract = _binary("subtract", _op.subtract)
multiply = _binary("multiply", _op.multiply)
divide = _binary("divide", _op.div)
floor_divide = _binary("floor_divide", _op.floordiv)
maximum = _binary("maximum", _op.max)
minimum = _binary("minimum", _op.min)
power = _binary("power", _op.power)
mod = _binary("mod", _op.truncmod)
floor_mod = _binary("floor_mod", _op.floormod)
equal = _binary("equal", _op.equal)
not_equal = _binary("not_equal", _op.not_equal)
less = _binary("less", _op.less)
less_equal = _binary("less_equal", _op.less_equal)
greater = _binary("greater", _op.greater)
greater_equal = _binary("greater_equal", _op.greater_equal)
logical_and = _binary("logical_and", _op.logical_and)
logical_or = _binary("logical_or", _op.logical_or)
logical_xor = _binary("logical_xor", _op.not_equal)


def where(condition, x, y):
    """``x`` where ``condition`` holds, else ``y``; the three tensors broadcast together.

    >>> from rvm.te.operation import placeholder
    >>> c = placeholder((2, 1), dtype="bool", name="c")
    >>> [d.value for d in where(c, placeholder((3,), name="x"), placeholder((1,), name="y")).shape]
    [2, 3]
    """
    shape = broadcast_shape(broadcast_shape(condition.shape, x.shape, "where"), y.shape, "where")

    def fcompute(*i):
        return _op.if_then_else(broadcast_index(condition, shape, i),
                                broadcast_index(x, shape, i), broadcast_index(y, shape, i))

    return compute(shape, named(fcompute, axis_names("ax", len(shape))), name="T_where")
