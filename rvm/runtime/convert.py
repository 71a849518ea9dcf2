"""convert(): Python values to their runtime objects."""
import numpy as np

from rvm.runtime.container import Array, Int, Map
from rvm.runtime.module import Module
from rvm.runtime.packed_func import PackedFunc


def convert(value):
    """The runtime object for ``value``.

    Lists and tuples become Array, dicts Map, callables PackedFunc, ints (numpy's
    too) Int, an int with TVM's ``.value``; other scalars, strings and runtime
    objects are returned as they are.

    >>> convert([1, 2, 3])[-1].value
    3
    >>> convert(lambda x: x + 1)(1)
    2
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return value if type(value) is Int else Int(value)
    if isinstance(value, (list, tuple)) and not isinstance(value, Array):
        if type(value) is not tuple and type(value) is not list:
            return value  # ShapeTuple and other tuple types keep their identity
        return Array(convert(v) for v in value)
    if isinstance(value, dict):
        return Map({k: convert(v) for k, v in value.items()})
    if isinstance(value, np.generic):
        return value.item()
    if callable(value) and not isinstance(value, (PackedFunc, Module, type)):
        return PackedFunc(value)
    return value
