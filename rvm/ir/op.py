"""Primitive operators: ``Op`` nodes looked up by name, each with named attributes.

The operator table lives in the IR core, as TVM's ``tvm.ir.Op`` does, so any
layer can look an operator up (``Op.get("relax.add")``) or attach an
attribute to it (``register_op_attr``); the Relax operator packages register
their operators into it (``rvm.relax.op.registry.register_op``).

An attribute set with a priority level (TVM's ``plevel``) is replaced only by
a higher level; the same level again is an error, a lower one is ignored.
"""
import difflib

from rvm.ir.expr import RelaxExpr

_OPS = {}


class Op(RelaxExpr):
    """A primitive operator such as ``relax.call_tir``; one instance per name.

    >>> import rvm.relax  # registers the Relax operators
    >>> Op.get("relax.call_tir").name
    'relax.call_tir'
    """

    _fields = ("name",)

    def __init__(self, name, span=None):
        self.name = name
        self.span = span
        self._attrs = {}
        self._levels = {}

    @staticmethod
    def get(name):
        """The operator registered as ``name`` (ValueError naming it when absent)."""
        op = _OPS.get(name)
        if op is None:
            close = difflib.get_close_matches(name, list(_OPS), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            if not close and name.startswith("relax.") and \
                    not any(k.startswith("relax.") for k in _OPS):
                hint = "; the Relax operators register when rvm.relax is imported"
            raise ValueError(f"operator '{name}' is not registered{hint}")
        return op

    @staticmethod
    def list_op_names():
        """Sorted names of every registered operator."""
        return sorted(_OPS)

    def get_attr(self, key, default=None):
        """The attribute ``key`` of this operator, or ``default``."""
        return self._attrs.get(key, default)

    def has_attr(self, key):
        """Whether this operator has the attribute ``key``."""
        return key in self._attrs

    def set_attr(self, key, value, plevel=None, override=False):
        """Sets attribute ``key``. Without ``plevel``, an existing one needs ``override``; with
        it, a higher level than the existing one's replaces it, a lower one is ignored and the
        same level is an error (TVM's rule)."""
        if plevel is not None:
            if isinstance(plevel, bool) or not isinstance(plevel, int):
                raise TypeError(f"operator '{self.name}': plevel must be an int, got {plevel!r}")
            old = self._levels.get(key)
            if key in self._attrs and old is not None and not override:
                if plevel == old:
                    raise ValueError(f"operator '{self.name}': attribute '{key}' is already "
                                     f"registered at plevel {old}; use a higher plevel to "
                                     "replace it")
                if plevel < old:
                    return self
            self._levels[key] = plevel
        elif key in self._attrs and not override:
            raise ValueError(f"operator '{self.name}' already has attribute '{key}'; "
                             "pass override=True to replace it")
        else:
            self._levels.pop(key, None)
        self._attrs[key] = value
        return self

    def reset_attr(self, key):
        """Removes the attribute ``key`` (absent: nothing happens)."""
        self._attrs.pop(key, None)
        self._levels.pop(key, None)

    @property
    def purity(self):
        """Whether calls of this operator are free of visible side effects."""
        return self._attrs.get("FPurity", True)

    def infer_struct_info(self, call, ctx=None):
        """The struct info of ``call`` (a Call of this operator with normalized arguments)."""
        infer = self._attrs.get("FInferStructInfo")
        if infer is None:
            raise ValueError(f"operator '{self.name}' has no struct info inference "
                             "(FInferStructInfo)")
        return infer(call, ctx)

    def __repr__(self):
        return f"Op({self.name!r})"


def register_op_attr(op_name, attr_key, value=None, level=10):
    """Sets attribute ``attr_key`` of the registered operator ``op_name`` at priority
    ``level``; without ``value``, a decorator setting the decorated function (TVM's
    ``tvm.ir.register_op_attr``)."""
    if not isinstance(attr_key, str) or not attr_key:
        raise TypeError(f"register_op_attr: attr_key must be a non-empty str, got {attr_key!r}")
    op = Op.get(op_name)

    def register(fn):
        op.set_attr(attr_key, fn, plevel=level)
        return fn

    return register(value) if value is not None else register


__all__ = ["Op", "register_op_attr"]
