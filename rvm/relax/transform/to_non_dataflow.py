"""ToNonDataflow: turn every dataflow block into an ordinary binding block.

The blocks of each sequence are joined into one binding block, and a sequence
whose result is not a variable (``return (a, b)``, an If branch ending in a
call) gets it bound to one, ``ret``, so every result is a Var.
Dataflow variables become ordinary variables (same names and struct info), so
later lowering passes can add impure bindings (allocations, kernel calls)
anywhere in a function.
"""
from rvm.relax.binding import BindingBlock, DataflowBlock, SeqExpr, VarBinding
from rvm.relax.expr import DataflowVar, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.transform.function_pass import function_pass


class _ToNonDataflow(ExprMutator):
    def visit_var_def(self, var):
        if not isinstance(var, DataflowVar):
            return var
        new = Var(var.name_hint, var.struct_info_, var.span)
        self.set_var_remap(var, new)
        return new

    def visit_binding_block(self, block):
        with self.builder.binding_scope(is_dataflow=False) as frame:
            for binding in block.bindings:
                self.visit_binding(binding)
        return BindingBlock(frame.bindings, block.span)

    def visit_seq_expr_(self, seq):
        new = super().visit_seq_expr_(seq)
        body = new.body
        extra = []
        if not isinstance(body, Var):
            body = Var("ret", body.struct_info_)
            extra.append(VarBinding(body, new.body))
        if extra or len(new.blocks) > 1 or any(isinstance(b, DataflowBlock)
                                                for b in new.blocks):
            bindings = [b for block in new.blocks for b in block.bindings] + extra
            new = SeqExpr([BindingBlock(bindings)], body, new.span)
        return new

    def visit_function_(self, func):
        if not isinstance(func.body, SeqExpr):
            func = func.with_fields(body=SeqExpr([], func.body))
        return super().visit_function_(func)


def to_non_dataflow(func):
    """``func`` without dataflow blocks or dataflow variables."""
    return _ToNonDataflow().visit_expr(func)


def ToNonDataflow():  # noqa: N802  (passes are CamelCase factories)
    """A pass turning dataflow blocks into binding blocks and DataflowVars into Vars."""
    return function_pass(lambda func, mod, ctx: to_non_dataflow(func), opt_level=0,
                         name="ToNonDataflow")
