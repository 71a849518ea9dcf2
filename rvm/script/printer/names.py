"""Deterministic names for printed variables and buffers.

Names come from the objects' hints, in the order the printer defines them;
a clash gets the first free suffix ``_1``, ``_2``... so the same IR always
prints the same text, independent of object ids.
"""
import keyword
import re

# Names the printed text uses itself; a variable may not shadow them.
RESERVED = {"T", "R", "I", "cls", "metadata", "range"}
_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def sanitize(hint, default="v"):
    """``hint`` made into a valid Python identifier (``"a.b" -> "a_b"``)."""
    name = _IDENT.sub("_", str(hint or ""))
    if not name:
        name = default
    if name[0].isdigit():
        name = "_" + name
    return name


def identifier(name):
    """``name`` as a Python identifier for a ``def`` or ``cls.name`` (``"<lambda>"`` ->
    ``"_lambda_"``); valid names are kept."""
    text = sanitize(name)
    return text + "_" if keyword.iskeyword(text) else text


class NameTable:
    """Maps IR objects (by identity) to unique names within one printed scope.

    >>> table = NameTable()
    >>> a, b = object(), object()
    >>> table.define(a, "x"), table.define(b, "x"), table.get(a)
    ('x', 'x_1', 'x')
    """

    def __init__(self, parent=None):
        self.parent = parent
        self.names = {}
        self.used = set(parent.used) if parent is not None else set()
        self.keep = []

    def define(self, obj, hint, default="v"):
        """Gives ``obj`` a fresh unique name derived from ``hint`` and returns it."""
        base = sanitize(hint, default)
        name = base
        if keyword.iskeyword(name):
            base = name = base + "_"
        k = 1
        sep = "" if base.endswith("_") else "_"  # "_" -> "_1", not "__1"
        while name in self.used or name in RESERVED:  # a variable named R prints as R_1
            name = f"{base}{sep}{k}"
            k += 1
        self.used.add(name)
        self.names[id(obj)] = name
        self.keep.append(obj)
        return name

    def alias(self, obj, text):
        """Names ``obj`` by the expression ``text`` (``A.data``), reserving no identifier."""
        self.names[id(obj)] = text
        self.keep.append(obj)

    def get(self, obj):
        """The name of ``obj``, or None when it has none in this scope or its parents."""
        name = self.names.get(id(obj))
        if name is None and self.parent is not None:
            return self.parent.get(obj)
        return name

    def has(self, obj):
        """Whether ``obj`` has a name here or in a parent scope."""
        return self.get(obj) is not None

    def child(self):
        """A nested scope: sees this scope's names and avoids reusing them."""
        return NameTable(self)
