"""String tensors and their builtins (``vm.builtin.string_*``).

A tensor of strings has no DLPack dtype, so it is not an ``NDArray``: at run time it is a
numpy array of unicode strings (dtype kind ``U``), which both engines carry unchanged as
an opaque value (``R.Object`` in Relax). Callers pass such arrays (or object arrays of
``str``, converted at entry by ``string_tensor_arg``). Kernels never see one: the
operators on strings are these builtins, so a compiled program and a saved executable
run them on either engine. A string constant is built at run time from string constants
of the executable's pool (``vm.builtin.string_tensor``), which the loader checks like
every other constant; an executable holds no pickled or raw object.

>>> import numpy as np
>>> from rvm.runtime.container import ShapeTuple
>>> words = string_tensor(ShapeTuple([2]), "a", "b")
>>> string_equal(words, np.array(["a"])).numpy()
array([ True, False])
"""
import numpy as np

from rvm.runtime.container import ShapeTuple
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_builtin


def is_string_array(value):
    """Whether ``value`` is a numpy array of unicode strings (a string tensor)."""
    return isinstance(value, np.ndarray) and value.dtype.kind == "U"


def string_tensor_arg(value):
    """A numpy array of strings as the string tensor a VM takes (``U`` dtype), or None
    when it holds anything but ``str`` (then it is no string tensor)."""
    if is_string_array(value):
        return value
    if value.dtype == object and value.size and all(isinstance(v, str) for v in value.flat):
        return value.astype(str)
    return None


def _strings(value, who, what):
    if not is_string_array(value):
        kind = f"a {value.dtype} array" if isinstance(value, np.ndarray) else \
            type(value).__name__
        raise TypeError(f"{who}: {what} must be a string tensor (a numpy array of str), got "
                        f"{kind}")
    return value


@register_builtin("vm.builtin.string_tensor")
def string_tensor(shape, *values):
    """The string tensor of ``shape`` holding ``values`` (strings, row-major)."""
    if not isinstance(shape, ShapeTuple):
        raise TypeError(f"string_tensor: the shape must be a shape, got {type(shape).__name__}")
    size = int(np.prod(shape, dtype=np.int64))
    if len(values) != size:
        raise ValueError(f"string_tensor: a tensor of shape {tuple(shape)} holds {size} "
                         f"strings, got {len(values)}")
    if not all(isinstance(v, str) for v in values):
        raise TypeError("string_tensor: every value must be a string")
    return np.array(values if values else [], dtype=str).reshape(tuple(shape))


@register_builtin("vm.builtin.string_equal")
def string_equal(lhs, rhs):
    """Elementwise ``lhs == rhs`` of two string tensors (broadcast), a bool tensor."""
    lhs = _strings(lhs, "string_equal", "the left operand")
    rhs = _strings(rhs, "string_equal", "the right operand")
    try:
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
    except ValueError:
        raise ValueError(f"string_equal: shapes {list(lhs.shape)} and {list(rhs.shape)} do "
                         "not broadcast") from None
    return array(np.asarray(np.char.equal(lhs, rhs)).reshape(shape))
