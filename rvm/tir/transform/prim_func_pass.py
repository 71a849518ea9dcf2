"""prim_func_pass: a module pass applying a function to every PrimFunc of a module."""
from rvm.ir.module import IRModule
from rvm.tir.function import PrimFunc
from rvm.ir.transform import ModulePass, PassInfo


def prim_func_pass(fn, name, opt_level=0):
    """A Pass running ``fn(func, mod, ctx) -> PrimFunc`` on each PrimFunc; others are kept.

    A module whose functions all come back unchanged is returned as it is.

    >>> identity = prim_func_pass(lambda f, m, c: f, "Identity")
    >>> identity.info.name
    'Identity'
    """

    def transform(mod, ctx):
        changed = {}
        for gv, func in mod.functions.items():
            if isinstance(func, PrimFunc):
                new = fn(func, mod, ctx)
                if not isinstance(new, PrimFunc):
                    raise TypeError(f"pass {name} turned PrimFunc '{gv.name_hint}' into "
                                    f"{type(new).__name__}; expected a PrimFunc")
                if new is not func:
                    changed[gv] = new
        if not changed:
            return mod
        out = IRModule({}, mod.attrs)
        for gv, func in mod.functions.items():
            out[gv] = changed.get(gv, func)
        return out

    return ModulePass(transform, PassInfo(opt_level, name))
