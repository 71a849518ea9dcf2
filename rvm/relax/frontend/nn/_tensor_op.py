"""Python operators on ``nn.Tensor`` (``a + b``, ``x * 2.0``, ``x.reshape(...)``), each one
binding named as ``nn.op`` names it; a Python scalar operand becomes a constant of the
tensor's dtype. The Tensor class supplies ``_wrap`` (``core.wrap_nested``)."""
from rvm.relax import op as _op


def _operand(value, ref, who):
    if isinstance(value, (bool, int, float)):
        return ref.from_scalar(value, ref.dtype)._expr
    if not hasattr(value, "_expr"):
        raise TypeError(f"nn.Tensor {who}: the other operand must be an nn.Tensor or a Python "
                        f"scalar, got {type(value).__name__}")
    return value._expr


def _binary(relax_op, name, reflected=False):
    def apply(self, other):
        other = _operand(other, self, name)
        args = (other, self._expr) if reflected else (self._expr, other)
        return self._wrap(relax_op(*args), name)

    apply.__doc__ = f"``{name}`` of the two operands (a binding named {name!r})."
    return apply


class TensorOp:
    """The operator methods of ``nn.Tensor``."""

    __add__ = _binary(_op.add, "add")
    __radd__ = _binary(_op.add, "add", reflected=True)
    __sub__ = _binary(_op.subtract, "subtract")
    __rsub__ = _binary(_op.subtract, "subtract", reflected=True)
    __mul__ = _binary(_op.multiply, "mul")
    __rmul__ = _binary(_op.multiply, "mul", reflected=True)
    __truediv__ = _binary(_op.divide, "divide")
    __matmul__ = _binary(_op.matmul, "matmul")
    __lt__ = _binary(_op.less, "less")
    __le__ = _binary(_op.less_equal, "less_equal")
    __gt__ = _binary(_op.greater, "greater")
    __ge__ = _binary(_op.greater_equal, "greater_equal")
    maximum = _binary(_op.maximum, "maximum")
    minimum = _binary(_op.minimum, "minimum")
    __hash__ = object.__hash__

    def __neg__(self):
        return self._wrap(_op.negative(self._expr), "negative")

    def astype(self, dtype):
        """The tensor converted to ``dtype``."""
        return self._wrap(_op.astype(self._expr, dtype), "astype")

    def reshape(self, shape):
        """The tensor with a new shape of the same size."""
        return self._wrap(_op.reshape(self._expr, list(shape)), "reshape")

    def permute_dims(self, axes=None):
        """The tensor with its axes permuted (reversed when ``axes`` is None)."""
        return self._wrap(_op.permute_dims(self._expr, axes), "permute_dims")

    def repeat(self, repeats, axis=None):
        """The tensor with its elements repeated along ``axis``."""
        return self._wrap(_op.repeat(self._expr, repeats, axis), "repeat")
