"""Node: the base of every IR node (TIR and Relax), and Span, a source location.

A node class declares ``_fields``, the ordered attribute names that make up
its structure; structural equality, structural hashing and the generic
visitors walk exactly these. Nodes are immutable by convention: passes build
new nodes (``with_fields``) instead of assigning to old ones.
"""
import copy

from rvm.runtime.packed_func import register_object_type

_node_printer = []


def register_node_printer(fn):
    """Installs ``fn(node) -> str`` as the text form of nodes (the script printer).

    Lower layers cannot import the printer, so it registers itself here.
    Returns ``fn`` so it can be used as a decorator.
    """
    _node_printer[:] = [fn]
    return fn


class Span:
    """A location in source text: file name, 1-based line and column.

    >>> Span("model.py", 3, 5)
    Span('model.py', 3, 5)
    """

    __slots__ = ("filename", "line", "column")

    def __init__(self, filename, line, column=0):
        self.filename = filename
        self.line = line
        self.column = column

    def __repr__(self):
        return f"Span({self.filename!r}, {self.line}, {self.column})"

    def __str__(self):
        return f"{self.filename}:{self.line}"


class Node:
    """Base class of IR nodes.

    Subclasses list their structural attributes in ``_fields``; ``span`` is
    never part of the structure. Hashing is by identity: use
    ``rvm.ir.structural_equal``/``structural_hash`` to compare structure and
    ``same_as`` for identity (``==`` builds comparison expressions on TIR
    expressions, as in TVM).

    Classes that set ``_is_var = True`` are variables: structural equality
    compares them up to renaming. Fields listed in ``_equal_ignored`` are
    structure that equality and hashing skip (names kept for people, such as
    a block's name, as in TVM).
    """

    _fields = ()
    _is_var = False
    span = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_object_type(cls)

    def same_as(self, other):
        """Whether ``other`` is this very node (identity)."""
        return self is other

    __hash__ = object.__hash__

    def with_fields(self, **changes):
        """A copy of this node with the given attributes replaced.

        >>> from rvm.ir.expr import GlobalVar
        >>> GlobalVar("f").with_fields(name_hint="g").name_hint
        'g'
        """
        unknown = set(changes) - set(self._fields) - {"span"} - set(getattr(self, "__dict__", {}))
        if unknown:
            raise AttributeError(
                f"{type(self).__name__} has no field(s) {sorted(unknown)}; "
                f"expected some of {list(self._fields)}")
        new = copy.copy(self)
        for key, value in changes.items():
            object.__setattr__(new, key, value)
        return new

    def fields(self):
        """The (name, value) pairs of the structural fields, in order."""
        return [(name, getattr(self, name)) for name in self._fields]

    def script(self, **kwargs):
        """The text form of this node (needs the script printer, rvm.script)."""
        if not _node_printer:
            raise RuntimeError(
                "no script printer is registered; import rvm.script to print IR as text")
        return _node_printer[0](self, **kwargs)

    def show(self, **kwargs):
        """Prints ``script()``."""
        print(self.script(**kwargs))

    def __repr__(self):
        if _node_printer:
            try:
                return _node_printer[0](self)
            except Exception:  # a repr must not fail; fall back to the generic form
                pass
        return self._fallback_repr()

    def _fallback_repr(self):
        """The text of ``repr`` when no printer is registered (subclasses refine it)."""
        return generic_repr(self)


def generic_repr(node):
    """``ClassName(field=value, ...)`` for any node without a printer; variables show a name."""
    if getattr(type(node), "_is_var", False):
        return f"{type(node).__name__}({getattr(node, 'name_hint', '?')!r})"
    parts = [f"{name}={getattr(node, name, None)!r}" for name in node._fields]
    return f"{type(node).__name__}({', '.join(parts)})"
