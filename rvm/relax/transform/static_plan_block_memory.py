"""StaticPlanBlockMemory: plan the storage of a function's intermediate tensors, with reuse.

Every ``R.builtin.alloc_tensor`` of a constant shape in the top-level blocks
of a Relax function whose tensor does not escape (is not, or does not flow
into, the function's result) becomes::

    storage = R.memory.alloc_storage(R.shape([nbytes]), 0, "global", dtype)
    alloc = R.memory.alloc_tensor(storage, 0, R.shape([...]), dtype)

A storage is shared by tensors whose lifetimes do not overlap: once the last
use of a tensor is past, its storage is free for the next allocation of the
same dtype (the smallest free storage that fits; else the largest one, grown).
``R.memory.kill_tensor`` follows the last use of each planned tensor and
``R.memory.kill_storage`` of every storage ends the function's last block.

Lifetimes are conservative: a value computed from a planned tensor by
anything but a kernel call (a tuple, a packed function such as a reshape
view, a call of a Relax function, an If) may alias it and keeps it alive.
Tensors returned by the function keep their own allocations, so a returned
value never shares memory with anything reused. Allocations of symbolic
shapes and those inside If branches are left for the VM to allocate.
"""
import math

from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.var_analysis import used_vars
from rvm.relax.binding import SeqExpr, VarBinding
from rvm.relax.expr import Call, DataTypeImm, PrimValue, ShapeExpr, StringImm
from rvm.relax.function import Function
from rvm.relax.op.memory import kill_storage, kill_tensor
from rvm.relax.op.registry import Op
from rvm.tir.expr import IntImm
from rvm.relax.transform.function_pass import function_pass
from rvm.relax.transform.lowering_util import bind, normalized

# Calls whose result never aliases their arguments.
_NO_ALIAS_OPS = {
    "relax.builtin.alloc_tensor", "relax.memory.alloc_storage", "relax.memory.alloc_tensor",
    "relax.memory.kill_storage", "relax.memory.kill_tensor", "relax.vm.kill_object",
    "relax.vm.call_tir_dyn", "relax.shape_of", "relax.null_value",
}


class _Storage:
    def __init__(self, index, nbytes, dtype):
        self.index = index
        self.nbytes = nbytes
        self.dtype = dtype
        self.var = None


def _planned_alloc(value):
    """(nbytes, dtype) of a plannable builtin.alloc_tensor, else None."""
    if not (isinstance(value, Call) and isinstance(value.op, Op)
            and value.op.name == "relax.builtin.alloc_tensor"):
        return None
    shape, dtype = value.args[0], value.args[1]
    if not isinstance(shape, ShapeExpr) or not isinstance(dtype, DataTypeImm):
        return None
    if not all(isinstance(d, IntImm) for d in shape.values):
        return None
    return math.prod(d.value for d in shape.values) * dtype.value.itemsize, dtype.value


def _result_may_alias(value, mod):
    if isinstance(value, Call):
        if isinstance(value.op, Op) and value.op.name in _NO_ALIAS_OPS:
            return False
        if isinstance(value.op, GlobalVar) and mod is not None and value.op.name_hint in mod:
            return isinstance(mod[value.op.name_hint], Function)
    return True


def _analyze(bindings, body, mod):
    """Allocation sites, their last uses, and the allocations that escape through ``body``."""
    tokens_of = {}
    allocs = {}
    last_use = {}
    for i, binding in enumerate(bindings):
        used = used_vars(binding.value)
        tokens = set()
        for var in used:
            for t in tokens_of.get(id(var), ()):
                last_use[t] = i
                tokens.add(t)
        plan = _planned_alloc(binding.value) if isinstance(binding, VarBinding) else None
        if plan is not None:
            allocs[i] = plan
            last_use[i] = i
            tokens = {i}
        elif not _result_may_alias(binding.value, mod):
            tokens = set()
        tokens_of[id(binding.var)] = tokens
    escaping = set()
    for var in used_vars(body):
        escaping |= tokens_of.get(id(var), set())
    return allocs, last_use, escaping


def _assign(allocs, last_use, escaping):
    """alloc index -> _Storage, reusing storages whose tensors are dead."""
    frees_at = {}
    for t in allocs:
        if t not in escaping:
            frees_at.setdefault(last_use[t], []).append(t)
    free = {}
    storages = []
    assignment = {}
    for i in sorted(set(allocs) | set(frees_at)):
        if i in allocs and i not in escaping:
            nbytes, dtype = allocs[i]
            pool = free.setdefault(str(dtype), [])
            fits = [s for s in pool if s.nbytes >= nbytes]
            if fits:
                chosen = min(fits, key=lambda s: s.nbytes)
            elif pool:
                chosen = max(pool, key=lambda s: s.nbytes)
                chosen.nbytes = nbytes
            else:
                chosen = _Storage(len(storages), nbytes, dtype)
                storages.append(chosen)
            if chosen in pool:
                pool.remove(chosen)
            assignment[i] = chosen
        for t in frees_at.get(i, ()):
            free.setdefault(str(allocs[t][1]), []).append(assignment[t])
    return assignment, storages


def _emit(out, name, expr):
    var, binding = bind(name, expr)
    out.append(binding)
    return var


def static_plan_block_memory(func, mod=None):
    """``func`` with its intermediate tensors placed in planned storages (module docstring)."""
    body = func.body
    if not isinstance(body, SeqExpr) or not body.blocks:
        return func
    flat = [b for block in body.blocks for b in block.bindings]
    allocs, last_use, escaping = _analyze(flat, body.body, mod)
    assignment, storages = _assign(allocs, last_use, escaping)
    if not assignment:
        return func
    kills_after = {}
    for t in assignment:
        kills_after.setdefault(last_use[t], []).append(t)
    new_blocks = []
    i = 0
    for block in body.blocks:
        out = []
        for binding in block.bindings:
            storage = assignment.get(i)
            if storage is None:
                out.append(binding)
            else:
                if storage.var is None:
                    storage.var = _emit(out, "storage", Call(
                        Op.get("relax.memory.alloc_storage"),
                        [ShapeExpr([storage.nbytes]), PrimValue(0), StringImm("global"),
                         DataTypeImm(storage.dtype)]))
                shape, dtype = binding.value.args[0], binding.value.args[1]
                value = normalized(Call(Op.get("relax.memory.alloc_tensor"),
                                        [storage.var, PrimValue(0), shape, dtype]))
                out.append(VarBinding(binding.var, value, binding.span))
            for t in kills_after.get(i, ()):
                _emit(out, "_", kill_tensor(flat[t].var))
            i += 1
        new_blocks.append(out)
    for storage in storages:
        _emit(new_blocks[-1], "_", kill_storage(storage.var))
    blocks = [type(b)(bs, b.span) for b, bs in zip(body.blocks, new_blocks)]
    return func.with_fields(body=SeqExpr(blocks, body.body, body.span))


def StaticPlanBlockMemory():  # noqa: N802  (passes are CamelCase factories)
    """A pass planning intermediate tensors into reused storages (module docstring)."""
    return function_pass(lambda func, mod, ctx: static_plan_block_memory(func, mod),
                         opt_level=0, name="StaticPlanBlockMemory")

