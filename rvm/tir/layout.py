"""Tensor layouts named by letters: ``layout("NCHW")`` says which axis holds the batch (N),
the channels (C) and the spatial dimensions (H, W), as TVM's ``tir.layout`` does.

Only primal layouts are supported (each letter once, upper case); a split
layout such as ``NCHW4c`` is rejected with a message saying so.

>>> nhwc = layout("NHWC")
>>> nhwc.index_of("C"), nhwc.permutation_from("NCHW")
(3, [0, 2, 3, 1])
"""


class Layout:
    """A layout string such as ``"NCHW"`` or ``"OIHW"``: one upper-case letter per axis."""

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError(f"layout: expected a non-empty string such as 'NCHW', got {name!r}")
        if not name.isalpha() or not name.isupper() or len(set(name)) != len(name):
            raise ValueError(f"layout {name!r}: only primal layouts (each axis one distinct "
                             "upper-case letter, like 'NCHW' or 'NHWC') are supported")
        self.name = name

    def __len__(self):
        return len(self.name)

    def __repr__(self):
        return f"Layout({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Layout) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def index_of(self, axis):
        """The position of the axis named ``axis`` (a letter); -1 when absent."""
        return self.name.find(axis)

    def permutation_from(self, other):
        """For each axis of this layout, its position in layout ``other`` (a Layout or str):
        ``transpose(x_in_other, axes=perm)`` is x in this layout."""
        other = other if isinstance(other, Layout) else Layout(other)
        if sorted(other.name) != sorted(self.name):
            raise ValueError(f"layouts {other.name!r} and {self.name!r} do not have the same "
                             "axes")
        return [other.index_of(a) for a in self.name]


def layout(name, expected=None):
    """The Layout named ``name``; ``expected`` (a string such as "NCHW") requires the same
    axes in some order.

    >>> layout("NHWC", expected="NCHW").name
    'NHWC'
    """
    out = Layout(name)
    if expected is not None and sorted(out.name) != sorted(expected):
        raise ValueError(f"layout {name!r}: expected a permutation of {expected!r}")
    return out
