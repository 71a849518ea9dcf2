"""ShapeTuple, Array and Map."""
import numpy as np
import pytest

from rvm.runtime.container import Array, Map, ShapeTuple


def test_shape_tuple():
    s = ShapeTuple([np.int64(2), 3])
    assert s == (2, 3) and isinstance(s, tuple) and type(s[0]) is int
    with pytest.raises(TypeError, match="expects integers"):
        ShapeTuple([2.5])


def test_array():
    a = Array([1, 2, 3])
    assert len(a) == 3 and a[-1] == 3 and isinstance(a[1:], Array)
    assert a == [1, 2, 3] and a == (1, 2, 3) and a != (1, 2)
    assert hash(a) == hash(Array((1, 2, 3))) and repr(a) == "[1, 2, 3]"


def test_map():
    m = Map({"a": 1})
    assert m["a"] == 1 and m == {"a": 1} and list(m) == ["a"] and len(m) == 1
    with pytest.raises(KeyError):
        m["b"]
