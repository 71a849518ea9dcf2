"""KillAfterLastUse: release each object as soon as the function no longer needs it.

After the last use of a variable bound in a function, ``_ = R.vm.kill_object(var)``
is inserted so the VM drops the register's reference and the memory behind it
can be reused (by the pooled allocator, on this or a later call). Kills placed
by earlier passes (``R.memory.kill_tensor``/``kill_storage``, ``vm.kill_object``)
are removed first; the new ones supersede them.

- A binding ``b = a`` shares ``a``'s register in the VM, so ``a`` and ``b``
  are one object: the first of its names bound in the scope is killed after
  the last use of any of them, and none when one of them is the function's
  (or branch's) result.
- A use inside an ``If`` counts as a use at the ``If`` binding; variables bound
  inside a branch are handled within that branch, except aliases of variables
  of the enclosing scope (killing one would clear the outer variable too).
- Parameters, void values (the result of a kernel call) and variables bound to
  constants or immediates (which hold nothing worth freeing) are never killed.
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import used_vars
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, Constant, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Var,
)
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TupleStructInfo
from rvm.relax.transform.function_pass import function_pass
from rvm.relax.transform.lowering_util import bind

_LEAVES = (Constant, PrimValue, ShapeExpr, StringImm, DataTypeImm, ExternFunc, GlobalVar)
_KILL_OPS = ("relax.memory.kill_tensor", "relax.memory.kill_storage", "relax.vm.kill_object")


def _is_kill(binding):
    value = binding.value
    return (isinstance(value, Call) and isinstance(value.op, Op)
            and value.op.name in _KILL_OPS)


def _is_void(var):
    sinfo = var.struct_info_
    return isinstance(sinfo, TupleStructInfo) and not sinfo.fields


class _AliasClasses:
    """Union-find over variables joined by ``b = a`` bindings."""

    def __init__(self):
        self.parent = {}

    def find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _kill_in_seq(seq, nested=False):
    bindings = [b for block in seq.blocks for b in block.bindings if not _is_kill(b)]
    bindings = [_kill_in_branches(b) for b in bindings]
    classes = _AliasClasses()
    members = {}
    bound_here = {}
    foreign = set()  # variables of an enclosing scope that a branch variable aliases
    leaves = set()  # variables bound to constants, immediates and names: no object to free
    for binding in bindings:
        var = binding.var
        bound_here[id(var)] = var
        if isinstance(binding.value, _LEAVES):
            leaves.add(id(var))
        if isinstance(binding.value, Var):
            classes.union(id(binding.value), id(var))
            outer = id(binding.value) not in bound_here
            if nested and outer:
                foreign.add(id(binding.value))
    last = {}
    for i, binding in enumerate(bindings):
        for var in used_vars(binding.value):
            last[classes.find(id(var))] = i
    for i, binding in enumerate(bindings):
        root = classes.find(id(binding.var))
        last.setdefault(root, i)
    for key, var in bound_here.items():
        members.setdefault(classes.find(key), []).append(var)
    kept = {classes.find(id(v)) for v in used_vars(seq.body)}
    kept |= {classes.find(key) for key in foreign}
    kills_after = {}
    for root, vars_ in members.items():
        if root in kept:
            continue
        var = vars_[0]  # the VM shares one register between a variable and its aliases
        if not _is_void(var) and id(var) not in leaves:
            kills_after.setdefault(last[root], []).append(var)
    out = []
    for i, binding in enumerate(bindings):
        out.append(binding)
        for var in kills_after.get(i, ()):
            out.append(bind("_", Call(Op.get("relax.vm.kill_object"), [var]))[1])
    if not out:
        return SeqExpr([], seq.body, seq.span)
    return SeqExpr([BindingBlock(out)], seq.body, seq.span)


def _kill_in_branches(binding):
    value = binding.value
    if not (isinstance(binding, VarBinding) and isinstance(value, If)):
        return binding
    true_branch = _kill_in_seq(_as_seq(value.true_branch), nested=True)
    false_branch = _kill_in_seq(_as_seq(value.false_branch), nested=True)
    new_if = If(value.cond, true_branch, false_branch, value.span)
    object.__setattr__(new_if, "struct_info_", value.struct_info_)
    return VarBinding(binding.var, new_if, binding.span)


def _as_seq(expr):
    return expr if isinstance(expr, SeqExpr) else SeqExpr([], expr)


def kill_after_last_use(func):
    """``func`` with ``vm.kill_object`` after the last use of each variable (module docstring)."""
    if not isinstance(func.body, SeqExpr):
        return func
    return func.with_fields(body=_kill_in_seq(func.body))


def KillAfterLastUse():  # noqa: N802  (passes are CamelCase factories)
    """A pass inserting ``R.vm.kill_object`` after the last use of each bound variable."""
    return function_pass(lambda func, mod, ctx: kill_after_last_use(func), opt_level=0,
                         name="KillAfterLastUse")
