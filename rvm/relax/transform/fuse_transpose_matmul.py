"""FuseTransposeMatmul: ``R.matmul(x, R.permute_dims(w))`` becomes one NT matmul kernel.

A linear layer is written ``matmul(x, permute_dims(w))`` with ``w`` stored
(out_features, in_features). Legalized as it stands, that is a transpose
kernel writing a copy of ``w`` on every call, then a matmul reading the copy
column by column. This pass replaces such a matmul (the permute_dims swaps the
last two axes) with ``call_tir`` of ``topi.matmul(x, w, transpose_b=True)``,
which reads ``w`` row by row, as ``topi.nn.dense`` does; the permute_dims is
left for DeadCodeElimination when nothing else uses it.

>>> from rvm.relax.block_builder import BlockBuilder
>>> from rvm.relax.expr import Var
>>> from rvm.relax.op import matmul, permute_dims
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((1, 784), "float32"))
>>> w = Var("w", TensorStructInfo((128, 784), "float32"))
>>> bb = BlockBuilder()
>>> with bb.function("main", [x, w]):
...     with bb.dataflow():
...         wt = bb.emit(permute_dims(w))
...         gv = bb.emit_output(matmul(x, wt))
...     _ = bb.emit_func_output(gv)
>>> mod = FuseTransposeMatmul()(bb.get())
>>> [gv.name_hint for gv in mod.get_global_vars()]
['main', 'NT_matmul']
"""
from rvm.relax.expr import Call, Constant, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.topi.matmul import matmul as te_matmul
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.ir.transform import ModulePass, PassInfo


def _is_op(expr, name):
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == name


def _rank(expr):
    sinfo = expr.struct_info_
    return sinfo.ndim if isinstance(sinfo, TensorStructInfo) else -1


def _swaps_last_two(permute):
    """Whether ``permute`` (a permute_dims call) swaps the last two axes and nothing else."""
    ndim = _rank(permute.args[0])
    if ndim < 2:
        return False
    axes = (permute.attrs or {}).get("axes")
    if axes is None:
        return ndim == 2
    axes = [a % ndim for a in axes]
    return axes == list(range(ndim - 2)) + [ndim - 1, ndim - 2]


class _Rewriter(ExprMutator):
    def __init__(self, mod, keep_constant_weights=False):
        super().__init__(mod)
        self.keep_constant_weights = keep_constant_weights

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not _is_op(call, "relax.matmul") or not isinstance(call.args[1], Var):
            return call
        permute = self.builder.lookup_binding(call.args[1])
        if not _is_op(permute, "relax.permute_dims") or not _swaps_last_two(permute):
            return call
        x, w = call.args[0], permute.args[0]
        if self.keep_constant_weights and isinstance(w, Constant):
            return call  # FoldConstant transposes the weight once, at build time
        if _rank(x) < 2:
            return call
        return self.builder.call_te(te_matmul, x, w, transpose_b=True,
                                    out_dtype=(call.attrs or {}).get("out_dtype"),
                                    primfunc_name_hint="NT_matmul")


def fuse_transpose_matmul(mod, keep_constant_weights=False):
    """``mod`` with every matmul of a transposed right operand as an NT matmul kernel
    (except, with ``keep_constant_weights``, where the operand is a constant)."""
    return rewrite_functions(mod, _Rewriter(mod, keep_constant_weights))


def FuseTransposeMatmul(keep_constant_weights=False):  # noqa: N802  (passes are CamelCase)
    """A pass turning ``matmul(x, permute_dims(w))`` into an NT matmul kernel (module
    docstring).

    With ``keep_constant_weights`` a matmul whose ``w`` is a constant (a bound weight) is
    left as it is: FoldConstant then transposes the weight once at build time, and the
    kernel reads it along the output axis, which a tuned kernel vectorizes without a
    reduction across vector lanes (meta_schedule prepares modules for tuning this way)."""
    return ModulePass(lambda mod, ctx: fuse_transpose_matmul(mod, keep_constant_weights),
                      PassInfo(1, "FuseTransposeMatmul"))
