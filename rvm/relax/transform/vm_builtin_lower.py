"""VMBuiltinLower: lower memory and runtime operators to the VM's builtins.

==============================================  ===============================================
before                                          after
==============================================  ===============================================
``R.builtin.alloc_tensor(shape, dtype, dev)``   ``s = R.vm.alloc_storage(R.shape([nbytes]), dev,
                                                "uint8", "global")``,
                                                ``t = R.vm.alloc_tensor(s, 0, shape, dtype)``,
                                                ``R.vm.kill_object(s)``, then ``t``
``R.memory.alloc_storage(size, dev, scope, t)`` ``R.vm.alloc_storage(size, dev, "uint8", scope)``
``R.memory.alloc_tensor(s, off, shape, t)``     ``R.vm.alloc_tensor(s, off, shape, t)``
``R.memory.kill_tensor/kill_storage(x)``        ``R.vm.kill_object(x)``
``R.call_pure_packed(f, *args)``                ``f(*args)`` (a call of the ExternFunc)
``R.shape_of(x)``                               ``vm.builtin.shape_of(x)``
``R.reshape(x, shape)``                         ``vm.builtin.reshape(x, shape)`` (a view of
                                                ``x``'s memory; no copy)
``R.vm.call_tir_dyn(f, (args...))``             ``vm.builtin.call_tir_dyn(f, *args)``
``R.make_closure(f, (args...))``                ``vm.builtin.make_closure(f, *args)``
``R.invoke_closure(c, (args...))``              ``c(*args)`` (the VM invokes the closure)
``R.print(*values, format=f)``                  ``relax.run.print(f, *values)``
``R.assert_op(cond, args, format=f)``           ``relax.run.assert_op(cond, f, *args)``
==============================================  ===============================================

Storage sizes are byte counts: ``vm.builtin.alloc_storage`` multiplies its size
by the itemsize of its dtype hint, hence ``"uint8"``. A tensor whose shape is
only known as a shape variable gets a storage sized by that shape with its own
dtype as the hint. Any other operator left at this point is an error naming
it (high-level operators must have been legalized).
"""
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple,
)
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.tir.arith import simplify
from rvm.tir.expr import IntImm
from rvm.relax.transform.function_pass import function_pass
from rvm.relax.transform.lowering_util import bind, normalized

_KEPT_OPS = {"relax.vm.alloc_storage", "relax.vm.alloc_tensor", "relax.vm.kill_object",
             "relax.call_builtin_with_ctx", "relax.null_value"}


def _nbytes(shape, dtype):
    size = IntImm("int64", dtype.itemsize)
    for dim in shape.values:
        size = size * dim
    return simplify(size)


def _vm_alloc_storage(size, device, dtype, scope):
    return Call(Op.get("relax.vm.alloc_storage"), [size, device, dtype, scope])


class _Lowerer:
    def __init__(self, func_name):
        self.func_name = func_name

    def seq(self, seq):
        out = []
        for block in seq.blocks:
            for binding in block.bindings:
                self.binding(binding, out)
        return SeqExpr([BindingBlock(out)] if out else [], seq.body, seq.span)

    def binding(self, binding, out):
        value = binding.value
        if isinstance(value, If):
            new_if = If(value.cond, self.seq(_as_seq(value.true_branch)),
                        self.seq(_as_seq(value.false_branch)), value.span)
            object.__setattr__(new_if, "struct_info_", value.struct_info_)
            out.append(VarBinding(binding.var, new_if, binding.span))
            return
        if not (isinstance(binding, VarBinding) and isinstance(value, Call)
                and isinstance(value.op, Op)):
            out.append(binding)
            return
        post = []
        new = self.call(value, out, binding.var.name_hint, post)
        out.append(binding if new is value else VarBinding(binding.var, new, binding.span))
        out.extend(post)

    def call(self, call, out, name, post):
        op, args = call.op.name, call.args
        if op in _KEPT_OPS:
            return call
        if op == "relax.builtin.alloc_tensor":
            shape, dtype, device = args
            if isinstance(shape, ShapeExpr):
                size = ShapeExpr([_nbytes(shape, dtype.value)])
                hint = DataTypeImm("uint8")
            else:
                size, hint = shape, dtype
            storage, binding = bind(f"{name}_storage", _vm_alloc_storage(
                size, device, hint, StringImm("global")))
            out.append(binding)
            # The tensor keeps the storage's memory alive; the register is not needed.
            post.append(bind("_", Call(Op.get("relax.vm.kill_object"), [storage]))[1])
            return normalized(Call(Op.get("relax.vm.alloc_tensor"),
                                   [storage, PrimValue(0), shape, dtype]))
        if op == "relax.memory.alloc_storage":
            size, device, scope, _ = args
            return normalized(_vm_alloc_storage(size, device, DataTypeImm("uint8"), scope))
        if op == "relax.memory.alloc_tensor":
            return normalized(Call(Op.get("relax.vm.alloc_tensor"), list(args)))
        if op in ("relax.memory.kill_tensor", "relax.memory.kill_storage"):
            return normalized(Call(Op.get("relax.vm.kill_object"), list(args)))
        if op == "relax.call_pure_packed":
            return _extern_call(args[0], args[1:], call.struct_info_)
        if op == "relax.shape_of":
            return _extern_call(ExternFunc("vm.builtin.shape_of"), args, call.struct_info_)
        if op == "relax.reshape":
            return _extern_call(ExternFunc("vm.builtin.reshape"), args, call.struct_info_)
        if op == "relax.vm.call_tir_dyn":
            return _extern_call(ExternFunc("vm.builtin.call_tir_dyn"),
                                [args[0], *args[1].fields], call.struct_info_)
        if op == "relax.make_closure":
            return _extern_call(ExternFunc("vm.builtin.make_closure"),
                                [args[0], *_fields(args[1])], call.struct_info_)
        if op in ("relax.invoke_closure", "relax.invoke_pure_closure"):
            return _extern_call(args[0], _fields(args[1]), call.struct_info_)
        if op == "relax.print":
            return _extern_call(ExternFunc("relax.run.print"),
                                [StringImm(call.attrs["format"]), *args], call.struct_info_)
        if op == "relax.assert_op":
            return _extern_call(ExternFunc("relax.run.assert_op"),
                                [args[0], StringImm(call.attrs["format"]), *args[1:]],
                                call.struct_info_)
        raise ValueError(f"VMBuiltinLower: {self.func_name}: operator '{op}' has no VM lowering; "
                         "expected high-level operators to be legalized (LegalizeOps) and "
                         "call_tir/call_dps_packed to be rewritten (CallTIRRewrite) first")


def _extern_call(func, args, sinfo):
    call = Call(func, list(args))
    object.__setattr__(call, "struct_info_", sinfo)
    return call


def _fields(args):
    if isinstance(args, Tuple):
        return list(args.fields)
    raise ValueError(f"VMBuiltinLower: expected the arguments as a tuple expression, got "
                     f"{type(args).__name__}")


def _as_seq(expr):
    return expr if isinstance(expr, SeqExpr) else SeqExpr([], expr)


def vm_builtin_lower(func, name="function"):
    """``func`` with memory and runtime operators lowered to VM builtins (module docstring)."""
    if not isinstance(func, Function) or not isinstance(func.body, SeqExpr):
        return func
    return func.with_fields(body=_Lowerer(name).seq(func.body))


def VMBuiltinLower():  # noqa: N802  (passes are CamelCase factories)
    """A pass lowering memory and runtime operators to VM builtins (module docstring)."""
    return function_pass(
        lambda func, mod, ctx: vm_builtin_lower(func, func.get_attr("global_symbol") or "function"),
        opt_level=0, name="VMBuiltinLower")

