"""Runtime containers: ShapeTuple, Array and Map, and the boxed Int of convert()."""
import ctypes
import operator
from collections.abc import Mapping, Sequence


class Int(int):
    """An int as a runtime object (what ``convert`` makes of Python ints): an ``int`` in
    every use, with TVM's object attributes ``value`` (the plain int) and ``handle``.

    >>> x = Int(21)
    >>> x + 1, x.value, type(x.value).__name__
    (22, 21, 'int')
    """

    __slots__ = ()

    @property
    def value(self):
        """The value as a plain int."""
        return int(self)

    @property
    def handle(self):
        """A new ``ctypes.c_void_p`` holding this object's address, as TVM's handles are
        ctypes pointers (compare them by ``.value``)."""
        return ctypes.c_void_p(id(self))

    def __repr__(self):
        return int.__repr__(self)


class ShapeTuple(tuple):
    """A tensor shape: a tuple of ints that crosses the packed ABI as a shape object.

    >>> ShapeTuple([2, 3]) == (2, 3)
    True
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        try:
            values = tuple(operator.index(d) for d in dims)
        except TypeError:
            raise TypeError(f"ShapeTuple expects integers, got {dims!r}") from None
        return tuple.__new__(cls, values)

    def __repr__(self):
        return f"ShapeTuple({tuple.__repr__(self)})"


class Array(Sequence):
    """An immutable sequence (what lists and tuples become in convert()).

    >>> a = Array([1, 2, 3])
    >>> len(a), a[-1], list(a[-3:-1])
    (3, 3, [1, 2])
    """

    __slots__ = ("_items",)

    def __init__(self, items=()):
        self._items = tuple(items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Array(self._items[index])
        return self._items[index]

    def __len__(self):
        return len(self._items)

    def __eq__(self, other):
        if isinstance(other, Array):
            return self._items == other._items
        if isinstance(other, (tuple, list)):
            return self._items == tuple(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._items)

    def __repr__(self):
        return "[" + ", ".join(repr(x) for x in self._items) + "]"


class Map(Mapping):
    """An immutable mapping (what dicts become in convert())."""

    __slots__ = ("_items",)

    def __init__(self, items=()):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __eq__(self, other):
        if isinstance(other, (Map, dict)):
            return self._items == dict(other)
        return NotImplemented

    def __hash__(self):
        return hash(tuple(sorted(self._items.items(), key=lambda kv: repr(kv[0]))))

    def __repr__(self):
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self._items.items()) + "}"
