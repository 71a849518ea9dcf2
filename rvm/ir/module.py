"""IRModule: the unit of compilation, a set of named functions (Relax and TIR)."""
from rvm.ir.expr import BaseFunc, GlobalVar
from rvm.ir.node import Node, _node_printer as _printer, register_node_printer


def register_printer(fn):
    """Installs ``fn(node_or_module, show_meta=False) -> str``, the text form of IR.

    The script package registers its printer here, as the IR cannot import it;
    it serves ``IRModule.script()`` and every node's ``script()``/``repr``.
    Returns ``fn`` so it can be used as a decorator.
    """
    return register_node_printer(fn)


class IRModule(Node):
    """Functions keyed by GlobalVar, plus module attributes.

    >>> from rvm.ir.expr import BaseFunc
    >>> mod = IRModule()
    >>> gv = mod.add("main", BaseFunc())
    >>> mod.get_global_var("main") is gv, "main" in mod
    (True, True)
    """

    _fields = ("functions", "attrs")

    def __init__(self, functions=None, attrs=None):
        self.functions = {}
        self.attrs = dict(attrs or {})
        for key, func in (functions or {}).items():
            self.add(key, func)

    @classmethod
    def from_expr(cls, func, name=None):
        """A module holding ``func`` alone, named ``name``, else its global_symbol, else "main"."""
        if name is None:
            name = func.get_attr("global_symbol") if isinstance(func, BaseFunc) else None
        return cls({name or "main": func})

    def copy(self):
        """A shallow copy: same functions, independent table."""
        return IRModule(dict(self.functions), self.attrs)

    def _lookup(self, key):
        if isinstance(key, GlobalVar):
            for gv in self.functions:
                if gv is key or gv.name_hint == key.name_hint:
                    return gv
            return None
        if isinstance(key, str):
            for gv in self.functions:
                if gv.name_hint == key:
                    return gv
            return None
        raise TypeError(f"IRModule keys are GlobalVar or str, got {type(key).__name__}")

    def get_global_var(self, name):
        """The GlobalVar named ``name`` (ValueError naming it when absent)."""
        gv = self._lookup(name)
        if gv is None:
            raise ValueError(f"IRModule has no function named {name!r}; "
                             f"it has {[g.name_hint for g in self.functions]}")
        return gv

    def get_global_vars(self):
        """All GlobalVars, in insertion order."""
        return list(self.functions)

    def __getitem__(self, key):
        return self.functions[self.get_global_var(key.name_hint if isinstance(key, GlobalVar)
                                                  else key)]

    def __setitem__(self, key, func):
        self.add(key, func, replace=True)

    def __contains__(self, key):
        return self._lookup(key) is not None

    def __iter__(self):
        return iter(self.functions.items())

    def __len__(self):
        return len(self.functions)

    def items(self):
        """(GlobalVar, function) pairs, in insertion order."""
        return self.functions.items()

    functions_items = items

    def update(self, other):
        """Adds (or replaces) every function of ``other`` (an IRModule or a dict)."""
        pairs = other.functions.items() if isinstance(other, IRModule) else other.items()
        for key, func in pairs:
            self.add(key.name_hint if isinstance(key, GlobalVar) else key, func, replace=True)

    def add(self, gv_or_name, func, replace=False):
        """Adds ``func`` under a GlobalVar or name and returns the GlobalVar.

        Adding an existing name is an error unless ``replace`` is set.
        """
        if not isinstance(func, Node):
            raise TypeError(f"IRModule functions must be IR nodes, got {type(func).__name__}")
        existing = self._lookup(gv_or_name)
        if existing is not None:
            if not replace:
                raise ValueError(f"IRModule already has a function named {existing.name_hint!r}")
            self.functions[existing] = func
            return existing
        gv = gv_or_name if isinstance(gv_or_name, GlobalVar) else GlobalVar(gv_or_name)
        self.functions[gv] = func
        return gv

    def update_func(self, gv, func):
        """Replaces the function of ``gv`` (ValueError if it is not in the module)."""
        existing = self.get_global_var(gv.name_hint if isinstance(gv, GlobalVar) else gv)
        self.functions[existing] = func

    def remove(self, gv_or_name):
        """Removes a function (ValueError if it is not in the module)."""
        existing = self.get_global_var(gv_or_name.name_hint if isinstance(gv_or_name, GlobalVar)
                                       else gv_or_name)
        del self.functions[existing]

    def with_attr(self, key, value):
        """A new module with module attribute ``key`` set to ``value``."""
        attrs = dict(self.attrs)
        attrs[key] = value
        return IRModule(dict(self.functions), attrs)

    def get_attr(self, key, default=None):
        """The module attribute ``key``, or ``default``."""
        return self.attrs.get(key, default)

    def script(self, show_meta=False, **kwargs):
        """The module as script text (needs the printer registered by rvm.script)."""
        if not _printer:
            raise RuntimeError(
                "no IRModule printer is registered; import rvm.script to print modules as text")
        return _printer[0](self, show_meta=show_meta, **kwargs)

    def show(self, show_meta=False, **kwargs):
        """Prints ``script()``."""
        print(self.script(show_meta=show_meta, **kwargs))

    def __repr__(self):
        if _printer:
            try:
                return _printer[0](self)
            except Exception:  # a repr must not fail; fall back to the summary
                pass
        return f"IRModule({[gv.name_hint for gv in self.functions]})"
