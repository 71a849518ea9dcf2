"""Relax function passes and dataflow-block passes (TVM's ``function_pass`` and
``dataflowblock_pass``).

A function pass runs ``fn(func, mod, ctx) -> Function`` on every Relax function
of a module; a dataflow-block pass runs ``fn(block, mod, ctx) -> DataflowBlock``
on every dataflow block of every Relax function (those inside ``If`` branches
included). PrimFuncs are left alone by both. A module whose functions all come
back unchanged is returned as it is.

>>> @function_pass(opt_level=0, name="Noop")
... def noop(func, mod, ctx):
...     return func
>>> noop.info.name
'Noop'
"""
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.binding import DataflowBlock, SeqExpr, VarBinding
from rvm.relax.expr import If
from rvm.relax.function import Function
from rvm.ir.transform import Pass, _make_pass_decorator


def replace_functions(mod, changed):
    """A new module equal to ``mod`` with the functions in ``changed`` (GlobalVar -> function)
    replaced, in the same order; ``mod`` itself when ``changed`` is empty.

    A replaced Relax function gets a fresh GlobalVar carrying its new struct info.
    """
    if not changed:
        return mod
    out = IRModule({}, mod.attrs)
    for gv, func in mod.functions.items():
        new = changed.get(gv, func)
        if new is not func and isinstance(new, Function):
            gv = GlobalVar(gv.name_hint, gv.span)
            if new.struct_info_ is not None:
                object.__setattr__(gv, "struct_info_", new.struct_info_)
        out.add(gv, new)
    return out


def rewrite_functions(mod, mutator, select=None):
    """``mod`` with every Relax function (those ``select(func)`` accepts) visited by
    ``mutator`` (an ExprMutator over ``mod``), plus the functions it added to its builder's
    module (kernels from ``call_te``); ``mod`` itself when nothing changed."""
    changed = {}
    for gv, func in mod.functions.items():
        if isinstance(func, Function) and (select is None or select(func)):
            new = mutator.visit_expr(func)
            if new is not func:
                changed[gv] = new
    if not changed:
        return mod
    out = replace_functions(mod, changed)
    for gv, func in mutator.builder.get().functions.items():
        if gv.name_hint not in out:
            out.add(gv.name_hint, func)
    return out


class FunctionPass(Pass):
    """A pass from ``fn(func, mod, ctx) -> Function``, run on each Relax function."""

    def __init__(self, fn, info):
        self.fn = fn
        self.info = info

    def transform_module(self, mod, ctx):
        changed = {}
        for gv, func in mod.functions.items():
            if not isinstance(func, Function):
                continue
            new = self.fn(func, mod, ctx)
            if not isinstance(new, Function):
                raise TypeError(f"pass {self.info.name} turned Relax function '{gv.name_hint}' "
                                f"into {type(new).__name__}; expected a relax Function")
            if new is not func:
                changed[gv] = new
        return replace_functions(mod, changed)


class DataflowBlockPass(Pass):
    """A pass from ``fn(block, mod, ctx) -> DataflowBlock``, run on each dataflow block."""

    def __init__(self, fn, info):
        self.fn = fn
        self.info = info

    def transform_module(self, mod, ctx):
        changed = {}
        for gv, func in mod.functions.items():
            if not isinstance(func, Function):
                continue
            body = self._seq(func.body, mod, ctx)
            if body is not func.body:
                changed[gv] = func.with_fields(body=body)
        return replace_functions(mod, changed)

    def _seq(self, seq, mod, ctx):
        if not isinstance(seq, SeqExpr):
            return seq
        blocks = [self._block(b, mod, ctx) for b in seq.blocks]
        if all(a is b for a, b in zip(blocks, seq.blocks)):
            return seq
        return SeqExpr(blocks, seq.body, seq.span)

    def _block(self, block, mod, ctx):
        if isinstance(block, DataflowBlock):
            new = self.fn(block, mod, ctx)
            if not isinstance(new, DataflowBlock):
                raise TypeError(f"pass {self.info.name} returned {type(new).__name__} for a "
                                "dataflow block; expected a DataflowBlock")
            return new
        bindings = []
        for binding in block.bindings:
            value = binding.value
            if isinstance(binding, VarBinding) and isinstance(value, If):
                true_branch = self._seq(value.true_branch, mod, ctx)
                false_branch = self._seq(value.false_branch, mod, ctx)
                if true_branch is not value.true_branch or false_branch is not value.false_branch:
                    new_if = If(value.cond, true_branch, false_branch, value.span)
                    object.__setattr__(new_if, "struct_info_", value.struct_info_)
                    binding = VarBinding(binding.var, new_if, binding.span)
            bindings.append(binding)
        if all(a is b for a, b in zip(bindings, block.bindings)):
            return block
        return type(block)(bindings, block.span)


function_pass = _make_pass_decorator(FunctionPass)
function_pass.__doc__ = """Makes a pass running ``fn(func, mod, ctx) -> Function`` on each Relax
function (or a class with ``transform_function``). Use as ``@function_pass`` or
``@function_pass(opt_level=1, name="X")``."""

dataflowblock_pass = _make_pass_decorator(DataflowBlockPass)
dataflowblock_pass.__doc__ = """Makes a pass running ``fn(block, mod, ctx) -> DataflowBlock`` on
each dataflow block of each Relax function. Use as ``@dataflowblock_pass`` or
``@dataflowblock_pass(opt_level=1, name="X")``."""
