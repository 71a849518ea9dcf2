"""DecomposeOpsForInference: inference batch normalization as a per-channel scale and shift.

``R.nn.batch_norm(x, gamma, beta, mean, var, axis, epsilon, training=False)`` normalizes
with the moving statistics, which do not change between calls. Legalized as it stands,
the kernel computes ``(x - mean) / sqrt(var + eps) * gamma + beta`` for every element: a
square root and a divide per vector of output even when everything but ``x`` is a bound
weight. This pass (TVM's ``DecomposeOpsForInference``, in a form FoldConstant can use)
writes it as

    scale = gamma / sqrt(var + eps)           (shape [C])
    shift = beta - mean * scale
    out   = x * expand_dims(scale) + expand_dims(shift)   (broadcast along ``axis``)

and passes ``mean`` and ``var`` through as the tuple's other fields, as the legalized op
does. When the statistics and the affine parameters are constants, FoldConstant computes
``scale`` and ``shift`` once, at build, and FuseOps fuses the multiply-add into the
producer's kernel (a convolution's write-back); otherwise they cost two small per-channel
kernels per call. ``center=False`` drops ``beta``, ``scale=False`` drops ``gamma``.
Training batch norms (batch statistics) are left as they are.

>>> from rvm.relax.block_builder import BlockBuilder
>>> from rvm.relax.expr import Var
>>> from rvm.relax.op.nn import batch_norm
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((1, 4, 5, 5), "float32"))
>>> c = [Var(n, TensorStructInfo((4,), "float32")) for n in ("g", "b", "m", "v")]
>>> bb = BlockBuilder()
>>> with bb.function("main", [x, *c]):
...     with bb.dataflow():
...         gv = bb.emit_output(batch_norm(x, *c, axis=1, training=False))
...     _ = bb.emit_func_output(gv)
>>> mod = DecomposeOpsForInference()(bb.get())
>>> sorted({b.value.op.name for b in mod["main"].body.blocks[0].bindings
...         if hasattr(b.value, "op")})
['relax.add', 'relax.divide', 'relax.expand_dims', 'relax.multiply', 'relax.sqrt', \
'relax.subtract']
"""
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.expr import Call, Tuple, const
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.binary import add, divide, multiply, subtract
from rvm.relax.op.manipulate import expand_dims
from rvm.relax.op.registry import Op
from rvm.relax.op.unary import sqrt
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform.function_pass import rewrite_functions


def _float_tensor(expr):
    sinfo = expr.struct_info_
    return isinstance(sinfo, TensorStructInfo) and sinfo.ndim > 0 and sinfo.dtype is not None \
        and str(sinfo.dtype).startswith(("float", "bfloat"))


class _Decomposer(ExprMutator):
    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not (isinstance(call, Call) and isinstance(call.op, Op)
                and call.op.name == "relax.nn.batch_norm"):
            return call
        attrs = call.attrs or {}
        data, gamma, beta, mean, var = call.args
        if attrs.get("training") or not all(_float_tensor(a) for a in call.args):
            return call
        ndim = data.struct_info_.ndim
        if any(a.struct_info_.ndim != 1 for a in call.args[1:]):
            return call
        dtype = data.struct_info_.dtype
        emit = self.builder.emit
        root = emit(sqrt(emit(add(var, const(float(attrs.get("epsilon", 1e-5)), dtype)))))
        scale = emit(divide(gamma if attrs.get("scale", True) else const(1.0, dtype), root))
        shift = emit(multiply(mean, scale))
        shift = emit(subtract(beta, shift)) if attrs.get("center", True) \
            else emit(subtract(const(0.0, dtype), shift))
        trailing = ndim - 1 - int(attrs.get("axis", 1)) % ndim
        if trailing:
            axes = list(range(1, trailing + 1))
            scale, shift = emit(expand_dims(scale, axes)), emit(expand_dims(shift, axes))
        out = emit(add(emit(multiply(data, scale)), shift))
        return Tuple([out, mean, var])


def decompose_ops_for_inference(mod):
    """``mod`` with every inference batch norm as a scale and shift (module docstring)."""
    return rewrite_functions(mod, _Decomposer(mod))


def DecomposeOpsForInference():  # noqa: N802  (passes are CamelCase)
    """A pass writing inference batch norms as a per-channel multiply-add (module docstring)."""
    return ModulePass(lambda mod, ctx: decompose_ops_for_inference(mod),
                      PassInfo(0, "DecomposeOpsForInference"))
