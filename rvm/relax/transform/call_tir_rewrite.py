"""CallTIRRewrite: make the outputs of destination-passing calls explicit allocations.

``lv = R.call_tir(f, (x,), R.Tensor((n, 4), "float32"))`` becomes::

    alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0))
    _ = f(x, alloc)                 # the kernel writes into alloc
    lv = alloc

``call_dps_packed("env.f", ...)`` becomes a call of ``ExternFunc("env.f")`` in
the same way; several outputs are allocated one by one and ``lv`` is bound to
their tuple. A ``call_tir`` with ``tir_vars`` becomes ``relax.vm.call_tir_dyn``
(the kernel receives the symbolic values after its outputs). A
``call_tir_inplace`` allocates only its outputs whose inplace index is -1; the
others are the arguments the kernel overwrites, and ``lv`` is bound to them.
"""
from rvm.relax.binding import VarBinding
from rvm.relax.expr import Call, Tuple, TupleGetItem, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.memory import alloc_tensor
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TupleStructInfo
from rvm.relax.transform.function_pass import function_pass

_DPS_OPS = ("relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed")


def void_call(callee, args):
    """A call whose result is unused (a kernel writing into its output arguments)."""
    call = Call(callee, args)
    object.__setattr__(call, "struct_info_", TupleStructInfo([]))
    return call


def emit_void(builder, call, name="_"):
    """Binds a void call to a fresh variable in ``builder``'s current block."""
    var = Var(builder.get_unique_name(name), TupleStructInfo([]))
    builder.emit_normalized(VarBinding(var, call))
    return var


class _CallTIRRewriter(ExprMutator):
    def visit_var_binding_(self, binding):
        value = binding.value
        if not (isinstance(value, Call) and isinstance(value.op, Op)
                and value.op.name in _DPS_OPS):
            return super().visit_var_binding_(binding)
        value = self.visit_expr(value)
        out = value.sinfo_args[0]
        fields = out.fields if isinstance(out, TupleStructInfo) else [out]
        inplace = (value.attrs or {}).get("inplace_indices", [-1] * len(fields))
        allocs = [self.builder.emit(alloc_tensor(s.shape, s.dtype, 0), "alloc")
                  for s, index in zip(fields, inplace) if index == -1]
        args = self._unpack(value.args[1])
        new_outputs = iter(allocs)
        outputs = [args[index] if index != -1 else next(new_outputs) for index in inplace]
        callee = value.args[0]
        if len(value.args) == 3:
            kernel = Call(Op.get("relax.vm.call_tir_dyn"),
                          [callee, Tuple(args + allocs + [value.args[2]])])
            self.builder.emit(kernel, "_")
        else:
            emit_void(self.builder, void_call(callee, args + allocs))
        result = outputs[0] if len(outputs) == 1 and not isinstance(out, TupleStructInfo) \
            else Tuple(outputs)
        var = self.visit_var_def(binding.var)
        self.builder.emit_normalized(VarBinding(var, result, binding.span))

    def _unpack(self, args):
        if isinstance(args, Tuple):
            return list(args.fields)
        count = len(args.struct_info_.fields)
        return [self.builder.emit(TupleGetItem(args, i)) for i in range(count)]


def call_tir_rewrite(func):
    """``func`` with every call_tir / call_dps_packed binding rewritten (module docstring)."""
    return _CallTIRRewriter().visit_expr(func)


def CallTIRRewrite():  # noqa: N802  (passes are CamelCase factories)
    """A pass making the outputs of call_tir and call_dps_packed explicit allocations."""
    return function_pass(lambda func, mod, ctx: call_tir_rewrite(func), opt_level=0,
                         name="CallTIRRewrite")

