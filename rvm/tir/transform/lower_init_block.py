"""LowerInitBlock: a block's ``T.init`` becomes initialisation guarded by the reduction start.

TensorIR runs a reduction block's ``init`` before the first update of each
output element, i.e. when every reduction axis is at the start of its domain:

    with T.block("C"):                       with T.block("C"):
        vi, vk = T.axis.remap("SR", ...)         vi, vk = T.axis.remap("SR", ...)
        with T.init():                 ->        if vk == 0:
            C[vi] = 0.0                              C[vi] = 0.0
        C[vi] = C[vi] + A[vi, vk]                C[vi] = C[vi] + A[vi, vk]
"""
from rvm.tir import op as _op
from rvm.tir.expr import IterVar
from rvm.tir.stmt import IfThenElse, stmt_seq
from rvm.tir.stmt_functor import StmtMutator
from rvm.tir.transform.prim_func_pass import prim_func_pass


class _InitLowerer(StmtMutator):
    def visit_block_(self, op):
        op = self._generic(op)
        if op.init is None:
            return op
        conds = [_op.equal(iv.var, iv.dom.min) for iv in op.iter_vars
                 if iv.iter_type == IterVar.CommReduce]
        if not conds:
            # Without reduction axes the block runs once per output: init always applies.
            return op.with_fields(init=None, body=stmt_seq(op.init, op.body))
        guarded = IfThenElse(_op.all(*conds), op.init)
        return op.with_fields(init=None, body=stmt_seq(guarded, op.body))


def lower_init_block(func):
    """``func`` with every block's init turned into a guarded statement."""
    body = _InitLowerer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerInitBlock():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``lower_init_block``."""
    return prim_func_pass(lambda f, mod, ctx: lower_init_block(f), "LowerInitBlock")
