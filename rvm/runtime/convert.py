"""convert(): Python values to their runtime objects."""
import numpy as np

from rvm.runtime.container import Array, Map
from rvm.runtime.packed_func import PackedFunc


def convert(value):
    """The runtime object for ``value``.

    Lists and tuples become Array, dicts Map, callables PackedFunc; scalars,
    strings and runtime objects are returned as they are.

    >>> convert([1, 2, 3])[-1]
    3
    >>> convert(lambda x: x + 1)(1)
    2
    """
    if isinstance(value, (list, tuple)) and not isinstance(value, Array):
        if type(value) is not tuple and type(value) is not list:
            return value  # ShapeTuple and other tuple types keep their identity
        return Array(convert(v) for v in value)
    if isinstance(value, dict):
        return Map({k: convert(v) for k, v in value.items()})
    if isinstance(value, np.generic):
        return value.item()
    if callable(value) and not isinstance(value, PackedFunc) and not isinstance(value, type):
        return PackedFunc(value)
    return value
