"""ObjectPath: a path from a root object to a part of it (TVM's ``tvm.runtime.ObjectPath``),
as reported by ``rvm.ir.get_first_structural_mismatch``.

A path is a chain of steps from ``ObjectPath.root()``: an attribute, an array
index, a map value, or a missing array element / map entry (where one side of
a comparison has nothing). Paths compare step by step; map keys that are IR
nodes compare by identity.

>>> p = ObjectPath.root().attr("seq").array_index(2).attr("value")
>>> str(p)
'<root>.seq[2].value'
>>> p == ObjectPath.root().attr("seq").array_index(2).attr("value")
True
>>> str(ObjectPath.root().attr("params").missing_array_element(1))
'<root>.params[<missing element #1>]'
"""
import json


def _key_text(key):
    if isinstance(key, str):
        return json.dumps(key)
    if type(key).__name__ == "GlobalVar":
        return f'I.GlobalVar("{key.name_hint}")'
    name = getattr(key, "name_hint", None) or getattr(key, "name", None)
    return name if isinstance(name, str) else repr(key)


def _same_key(a, b):
    if isinstance(a, (str, int, float, bool)) or a is None:
        return type(a) is type(b) and a == b
    return a is b


class ObjectPath:
    """One step of a path and the path before it (``parent``); ``ObjectPath.root()``
    starts a path."""

    __slots__ = ("parent", "kind", "key")

    def __init__(self, parent, kind, key=None):
        self.parent = parent
        self.kind = kind
        self.key = key

    @staticmethod
    def root(root_name=None):
        """The path of the root object (``<root>``, or ``root_name``)."""
        return ObjectPath(None, "root", root_name)

    def attr(self, attr_key):
        """The path of attribute ``attr_key`` of this object."""
        return ObjectPath(self, "attr", attr_key)

    def array_index(self, index):
        """The path of element ``index`` of this array."""
        return ObjectPath(self, "index", int(index))

    def missing_array_element(self, index):
        """The path of element ``index`` this array lacks (the other side has it)."""
        return ObjectPath(self, "missing_index", int(index))

    def map_value(self, key):
        """The path of this map's value at ``key``."""
        return ObjectPath(self, "map_value", key)

    def missing_map_entry(self):
        """The path of an entry this map lacks (the other side has it)."""
        return ObjectPath(self, "missing_entry")

    def _steps(self):
        steps, node = [], self
        while node is not None:
            steps.append(node)
            node = node.parent
        return steps[::-1]

    def __len__(self):
        return len(self._steps())

    def is_prefix_of(self, other):
        """Whether ``other`` starts with this path."""
        mine, theirs = self._steps(), other._steps()
        return len(mine) <= len(theirs) and all(
            _same_step(a, b) for a, b in zip(mine, theirs))

    def __eq__(self, other):
        if not isinstance(other, ObjectPath):
            return NotImplemented
        mine, theirs = self._steps(), other._steps()
        return len(mine) == len(theirs) and all(_same_step(a, b) for a, b in zip(mine, theirs))

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None  # paths with node keys compare by identity; they are not dict keys

    def __str__(self):
        parts = []
        for step in self._steps():
            if step.kind == "root":
                parts.append(step.key or "<root>")
            elif step.kind == "attr":
                parts.append(f".{step.key}")
            elif step.kind == "index":
                parts.append(f"[{step.key}]")
            elif step.kind == "missing_index":
                parts.append(f"[<missing element #{step.key}>]")
            elif step.kind == "map_value":
                parts.append(f"[{_key_text(step.key)}]")
            else:
                parts.append("[<missing entry>]")
        return "".join(parts)

    def __repr__(self):
        return f"ObjectPath({str(self)!r})"


def _same_step(a, b):
    if a.kind != b.kind:
        return False
    if a.kind == "map_value":
        return _same_key(a.key, b.key)
    return a.key == b.key
