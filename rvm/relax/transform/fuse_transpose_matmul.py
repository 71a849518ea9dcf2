"""FuseTransposeMatmul: ``R.matmul(x, R.permute_dims(w))`` becomes one NT matmul kernel.

A linear layer is written ``matmul(x, permute_dims(w))`` with ``w`` stored
(out_features, in_features). Legalized as it stands, that is a transpose
kernel writing a copy of ``w`` on every call, then a matmul reading the copy
column by column. This pass replaces such a matmul (the permute_dims swaps the
last two axes) with ``call_tir`` of ``topi.matmul(x, w, transpose_b=True)``,
which reads ``w`` row by row, as ``topi.nn.dense`` does; the permute_dims is
left for DeadCodeElimination when nothing else uses it.

Two forms an exported graph (ONNX's attention scores) reaches are read the same way:

- a permute_dims that moves more than the last two axes, when the matmul's reduction
  axis (the operand's second last) is the input's innermost one: ``K^T =
  permute_dims(k, [0, 2, 3, 1])`` becomes ``permute_dims(k, [0, 2, 1, 3])`` (a copy that
  keeps the innermost axis contiguous) read by the NT matmul;
- a scale between the two, a ``multiply`` or ``divide`` with a tensor of one element (the
  ``sqrt(1/sqrt(d))`` torch's ONNX export puts on Q and K^T): elementwise with one value,
  it commutes with any permutation, so it moves to the untransposed side and its numbers
  do not change.

Either way the scores become ``NT_matmul(q, k)``, the form the attention rule of
rvm.dlight schedules, instead of an NN matmul over a transposed copy written with a
strided write per element.

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
from rvm.relax.op.binary import divide, multiply
from rvm.relax.op.manipulate import permute_dims
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


_SCALES = {"relax.multiply": multiply, "relax.divide": divide}


def _untransposed_axes(permute):
    """The axes ``q`` with ``permute_dims(w, q)`` equal to ``permute`` (a permute_dims call
    of ``w``) with its last two axes swapped back, when ``permute`` puts ``w``'s innermost
    axis second last (a matmul then reduces along it); None otherwise. ``q`` is the
    identity when ``permute`` swaps the last two axes and nothing else."""
    ndim = _rank(permute.args[0])
    if ndim < 2:
        return None
    axes = (permute.attrs or {}).get("axes")
    axes = list(range(ndim))[::-1] if axes is None else [int(a) % ndim for a in axes]
    if axes[-2] != ndim - 1:
        return None
    return axes[:-2] + [axes[-1], axes[-2]]


def _one_element(expr, rank):
    """Whether ``expr`` is a tensor of one element whose broadcast keeps rank ``rank``."""
    sinfo = expr.struct_info_
    if not isinstance(sinfo, TensorStructInfo) or sinfo.ndim > rank:
        return False
    dims = sinfo.shape_values
    return dims is not None and all(getattr(d, "value", d) == 1 for d in dims)


class _Rewriter(ExprMutator):
    def __init__(self, mod, keep_constant_weights=False):
        super().__init__(mod)
        self.keep_constant_weights = keep_constant_weights

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not _is_op(call, "relax.matmul") or not isinstance(call.args[1], Var):
            return call
        x = call.args[0]
        found = self._transposed(call.args[1])
        if found is None or _rank(x) < 2:
            return call
        w, axes, scale = found
        if self.keep_constant_weights and isinstance(w, Constant):
            return call  # FoldConstant transposes the weight once, at build time
        if axes != list(range(len(axes))):
            w = self.builder.emit(permute_dims(w, axes))
        if scale is not None:
            op, index, factor = scale
            w = self.builder.emit(op(w, factor) if index == 0 else op(factor, w))
        return self.builder.call_te(te_matmul, x, w, transpose_b=True,
                                    out_dtype=(call.attrs or {}).get("out_dtype"),
                                    primfunc_name_hint="NT_matmul")

    def _transposed(self, operand):
        """``(w, q, scale)`` when ``operand`` is ``permute_dims(w)`` read by a matmul along
        ``w``'s innermost axis (``q``: ``_untransposed_axes``), possibly multiplied or
        divided by a one-element tensor (``scale``: ``(op, index of the permuted operand,
        the other operand)``); None otherwise."""
        value = self.builder.lookup_binding(operand)
        scale = None
        if isinstance(value, Call) and isinstance(value.op, Op) and value.op.name in _SCALES:
            for index in (0, 1):
                inner, factor = value.args[index], value.args[1 - index]
                if isinstance(inner, Var) and _one_element(factor, _rank(inner)):
                    scale = (_SCALES[value.op.name], index, factor)
                    value = self.builder.lookup_binding(inner)
                    break
            else:
                return None
        if not _is_op(value, "relax.permute_dims"):
            return None
        axes = _untransposed_axes(value)
        return None if axes is None else (value.args[0], axes, scale)


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
