"""Python operators on ``nn.Tensor`` (``a + b``, ``x * 2.0``, ``x.reshape(...)``), each one an
``nn.op`` call; a Python scalar operand becomes a constant of the tensor's dtype."""
import importlib


def _op():
    return importlib.import_module("rvm.relax.frontend.nn.op")


def _operand(value, ref):
    if isinstance(value, (bool, int, float)):
        return type(ref).from_scalar(value, ref.dtype)
    return value


class TensorOp:
    """The operator methods of ``nn.Tensor``."""

    def __add__(self, other):
        return _op().add(self, _operand(other, self))

    def __radd__(self, other):
        return _op().add(_operand(other, self), self)

    def __sub__(self, other):
        return _op().subtract(self, _operand(other, self))

    def __rsub__(self, other):
        return _op().subtract(_operand(other, self), self)

    def __mul__(self, other):
        return _op().multiply(self, _operand(other, self))

    def __rmul__(self, other):
        return _op().multiply(_operand(other, self), self)

    def __truediv__(self, other):
        return _op().divide(self, _operand(other, self))

    def __matmul__(self, other):
        return _op().matmul(self, other)

    def __neg__(self):
        return _op().negative(self)

    def __lt__(self, other):
        return _op().less(self, _operand(other, self))

    def __le__(self, other):
        return _op().less_equal(self, _operand(other, self))

    def __gt__(self, other):
        return _op().greater(self, _operand(other, self))

    def __ge__(self, other):
        return _op().greater_equal(self, _operand(other, self))

    __hash__ = object.__hash__

    def astype(self, dtype):
        """The tensor converted to ``dtype``."""
        return _op().astype(self, dtype)

    def maximum(self, other):
        """Element-wise maximum with ``other``."""
        return _op().maximum(self, _operand(other, self))

    def minimum(self, other):
        """Element-wise minimum with ``other``."""
        return _op().minimum(self, _operand(other, self))

    def reshape(self, shape):
        """The tensor with a new shape of the same size."""
        return _op().reshape(self, shape)

    def permute_dims(self, axes=None):
        """The tensor with its axes permuted (reversed when ``axes`` is None)."""
        return _op().permute_dims(self, axes)

    def repeat(self, repeats, axis=None):
        """The tensor with its elements repeated along ``axis``."""
        return _op().repeat(self, repeats, axis)
