"""The builtins of sequences whose length is only known at run time (``vm.builtin.sequence_*``).

A sequence is a runtime tuple (``Array``) of tensors, the value ``R.Tuple`` builds; these
builtins compute on one whose length the compiler does not know (an ONNX sequence fed
as a model input, or grown in a loop). Positions are int64 tensors of one element,
negative ones counting from the end, as ONNX's sequence operators take them. Each
builtin returns a new sequence; none changes its arguments. An optional value is the
value or None (``vm.builtin.optional_has_element``).

>>> import numpy as np
>>> from rvm.runtime.ndarray import array
>>> seq = sequence_insert(Array([array(np.zeros(2, "float32"))]), array(np.ones(3, "float32")))
>>> int(sequence_length(seq).numpy()), tuple(seq[1].shape)
(2, (3,))
"""
import numpy as np

from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.ndarray import NDArray, array
from rvm.runtime.packed_func import register_builtin


def _sequence(value, who):
    """The tensors of a sequence: a runtime tuple, or a Python list or tuple (what the
    python engine passes on from a caller)."""
    if not isinstance(value, (Array, list, tuple)) or isinstance(value, ShapeTuple):
        raise TypeError(f"{who}: expected a sequence (a tuple of tensors), got "
                        f"{type(value).__name__}")
    for k, item in enumerate(value):
        _tensor(item, who, f"element {k} of the sequence")
    return value


def _tensor(value, who, what):
    if not isinstance(value, NDArray):
        raise TypeError(f"{who}: {what} must be a tensor, got {type(value).__name__}")
    return value


def _position(seq, position, who, insert=False):
    """The index ``position`` (an int64 tensor of one element, or None) names in ``seq``."""
    size = len(seq)
    if position is None:
        return size if insert else size - 1
    values = _tensor(position, who, "the position").numpy()
    if values.size != 1 or values.dtype.kind not in "iu":
        raise TypeError(f"{who}: the position must be one integer, got {values.dtype} of "
                        f"shape {list(values.shape)}")
    index = int(values.reshape(-1)[0])
    high = size if insert else size - 1
    if not -size <= index <= high:
        raise IndexError(f"{who}: position {index} is out of range for a sequence of "
                         f"{size} tensors (expected {-size} to {high})")
    return index + size if index < 0 else index


def _same_dtype(seq, tensor, who):
    if len(seq) and seq[0].dtype != tensor.dtype:
        raise TypeError(f"{who}: the sequence holds {seq[0].dtype} tensors, got "
                        f"{tensor.dtype}")


@register_builtin("vm.builtin.sequence_insert")
def sequence_insert(seq, tensor, position=None):
    """``seq`` with ``tensor`` inserted before ``position`` (appended when None)."""
    seq = _sequence(seq, "sequence_insert")
    _tensor(tensor, "sequence_insert", "the inserted value")
    _same_dtype(seq, tensor, "sequence_insert")
    index = _position(seq, position, "sequence_insert", insert=True)
    items = list(seq)
    items.insert(index, tensor)
    return Array(items)


@register_builtin("vm.builtin.sequence_erase")
def sequence_erase(seq, position=None):
    """``seq`` without the tensor at ``position`` (the last one when None)."""
    seq = _sequence(seq, "sequence_erase")
    if not len(seq):
        raise IndexError("sequence_erase: the sequence is empty")
    index = _position(seq, position, "sequence_erase")
    return Array([t for k, t in enumerate(seq) if k != index])


@register_builtin("vm.builtin.sequence_at")
def sequence_at(seq, position):
    """The tensor at ``position`` of ``seq``."""
    seq = _sequence(seq, "sequence_at")
    if not len(seq):
        raise IndexError("sequence_at: the sequence is empty")
    return seq[_position(seq, position, "sequence_at")]


@register_builtin("vm.builtin.sequence_length")
def sequence_length(seq):
    """The number of tensors of ``seq``, as an int64 scalar tensor."""
    return array(np.array(len(_sequence(seq, "sequence_length")), "int64"))


@register_builtin("vm.builtin.sequence_concat")
def sequence_concat(seq, axis, new_axis):
    """The tensors of ``seq`` joined along ``axis`` (an int); stacked along a new axis
    ``axis`` when ``new_axis`` (an int) is not 0 (ONNX ConcatFromSequence)."""
    seq = _sequence(seq, "sequence_concat")
    if not isinstance(axis, int) or not isinstance(new_axis, int):
        raise TypeError(f"sequence_concat: axis and new_axis must be ints, got "
                        f"{type(axis).__name__} and {type(new_axis).__name__}")
    if not len(seq):
        raise ValueError("sequence_concat: the sequence is empty; expected at least one tensor")
    arrays = [_tensor(t, "sequence_concat", "an element").numpy() for t in seq]
    if len({a.dtype for a in arrays}) != 1:
        raise TypeError(f"sequence_concat: the tensors have dtypes "
                        f"{sorted({str(a.dtype) for a in arrays})}; expected one")
    rank = arrays[0].ndim + (1 if new_axis else 0)
    if not -rank <= int(axis) < rank:
        raise ValueError(f"sequence_concat: axis {axis} is out of range for rank {rank}")
    try:
        out = np.stack(arrays, int(axis)) if new_axis else np.concatenate(arrays, int(axis))
    except ValueError as err:
        shapes = [list(a.shape) for a in arrays]
        raise ValueError(f"sequence_concat: cannot join tensors of shapes {shapes} along axis "
                         f"{axis}: {err}") from None
    return array(out)


@register_builtin("vm.builtin.optional_has_element")
def optional_has_element(value):
    """Whether the optional ``value`` holds one (is not None), as a bool scalar tensor."""
    return array(np.array(value is not None))


@register_builtin("vm.builtin.optional_get_element")
def optional_get_element(value):
    """The value an optional holds; an error when it is empty (None)."""
    if value is None:
        raise ValueError("optional_get_element: the optional value is empty")
    return value
