"""Expression bases shared by TIR and Relax: BaseExpr, PrimExpr, RelaxExpr, GlobalVar, BaseFunc."""
from rvm.ir.node import Node


class BaseExpr(Node):
    """Base of all expressions."""


class PrimExpr(BaseExpr):
    """Base of TIR (scalar) expressions; every one has a ``dtype``.

    The arithmetic operators are defined on the TIR expression classes
    (``rvm.tir.expr``), so ``n * 2`` on a ``tir.Var`` builds a ``tir.Mul``.
    """

    dtype = None


class RelaxExpr(BaseExpr):
    """Base of Relax expressions; ``struct_info_`` is set once the expression is normalized."""

    struct_info_ = None

    @property
    def struct_info(self):
        """The structure information of this expression (ValueError when not yet deduced)."""
        if self.struct_info_ is None:
            raise ValueError(
                f"{type(self).__name__} has no struct_info yet; expected a normalized expression "
                "(built through BlockBuilder or with explicit struct info)")
        return self.struct_info_


class GlobalVar(RelaxExpr):
    """The name of a function in an IRModule; compared by name.

    >>> GlobalVar("main").name_hint
    'main'
    """

    _fields = ("name_hint",)

    def __init__(self, name_hint, span=None):
        if not isinstance(name_hint, str):
            raise TypeError(f"GlobalVar expects a str name, got {type(name_hint).__name__}")
        self.name_hint = name_hint
        self.span = span

    def __repr__(self):
        return f"I.GlobalVar({self.name_hint!r})"


class BaseFunc(RelaxExpr):
    """Base of functions (tir.PrimFunc, relax.Function); ``attrs`` is a dict of str keys."""

    attrs = None

    def with_attr(self, key_or_dict, value=None):
        """A copy with attribute ``key`` set to ``value`` (or with every pair of a dict set).

        >>> # f.with_attr("global_symbol", "main").attrs["global_symbol"] == "main"
        """
        attrs = dict(self.attrs or {})
        if isinstance(key_or_dict, dict):
            attrs.update(key_or_dict)
        else:
            attrs[key_or_dict] = value
        return self.with_fields(attrs=attrs)

    def with_attrs(self, attr_map):
        """A copy with every pair of ``attr_map`` (a dict of str keys) set, as TVM's
        ``BaseFunc.with_attrs``."""
        if not hasattr(attr_map, "items"):
            raise TypeError(f"with_attrs expects a dict of attributes, got "
                            f"{type(attr_map).__name__}")
        for key in attr_map:
            if not isinstance(key, str):
                raise TypeError(f"with_attrs: attribute names must be str, got {key!r}")
        return self.with_attr(dict(attr_map))

    def without_attr(self, key):
        """A copy without attribute ``key`` (no error when absent)."""
        attrs = dict(self.attrs or {})
        attrs.pop(key, None)
        return self.with_fields(attrs=attrs)

    def get_attr(self, key, default=None):
        """The value of attribute ``key``, or ``default``."""
        return (self.attrs or {}).get(key, default)
