"""FoldConstant: evaluate at compile time what only depends on constants.

What is folded:

- a pure operator call whose tensor arguments are all ``relax.Constant``s and
  whose operator has an evaluator in ``FOLD_EVALUATORS`` (numpy versions of
  the elementwise arithmetic and comparison operators, unary math,
  ``astype``, ``matmul``, ``permute_dims``, ``reshape``, ``flatten``,
  ``nn.relu``, ``nn.softmax`` and the reductions); ``register_fold_evaluator``
  adds one;
- a ``call_tir`` whose arguments are all constants and whose outputs have
  static shapes, when a kernel evaluator is registered with
  ``register_call_tir_evaluator`` (the transform layer cannot compile
  kernels itself; the build driver installs one when it or this package is
  imported, a test may install its own);
- uses of a variable bound to a constant, which then see the constant.

Bindings left unused by folding stay until DeadCodeElimination removes them.
"""
import numpy as np

from rvm.ir.expr import GlobalVar
from rvm.relax.expr import Call, Constant, Tuple
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.runtime.ndarray import array
from rvm.tir.expr import IntImm
from rvm.relax.transform.function_pass import function_pass

FOLD_EVALUATORS = {}
_CALL_TIR_EVALUATOR = []


def register_fold_evaluator(op_name):
    """Decorator: ``fn(call, *numpy_args) -> numpy array`` evaluates ``op_name`` on constants."""

    def register(fn):
        FOLD_EVALUATORS[op_name] = fn
        return fn

    return register


def register_call_tir_evaluator(fn):
    """Installs ``fn(prim_func, args, out_sinfos) -> list of NDArrays`` to run a PrimFunc on
    constant NDArrays (``args``: inputs; ``out_sinfos``: the outputs' static struct info)."""
    _CALL_TIR_EVALUATOR[:] = [fn]
    return fn


def _simple(op_name, fn):
    FOLD_EVALUATORS[op_name] = lambda call, *args: fn(*args)


for _name, _fn in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                   ("divide", np.divide), ("floor_divide", np.floor_divide),
                   ("maximum", np.maximum), ("minimum", np.minimum), ("power", np.power),
                   ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater),
                   ("greater_equal", np.greater_equal), ("exp", np.exp), ("log", np.log),
                   ("sqrt", np.sqrt), ("tanh", np.tanh), ("negative", np.negative),
                   ("abs", np.abs), ("matmul", np.matmul)]:
    _simple(f"relax.{_name}", _fn)
_simple("relax.rsqrt", lambda x: 1 / np.sqrt(x))
_simple("relax.sigmoid", lambda x: 1 / (1 + np.exp(-x)))
_simple("relax.nn.relu", lambda x: np.maximum(x, 0))


def _attr(call, key, default=None):
    return (call.attrs or {}).get(key, default)


def _axis(call):
    axis = _attr(call, "axis")
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


FOLD_EVALUATORS["relax.astype"] = lambda call, x: x
FOLD_EVALUATORS["relax.permute_dims"] = lambda call, x: np.transpose(x, _attr(call, "axes"))
FOLD_EVALUATORS["relax.reshape"] = lambda call, x: x.reshape(_static_shape(call))
FOLD_EVALUATORS["relax.flatten"] = lambda call, x: x.reshape(-1)
for _name, _fn in [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)]:
    FOLD_EVALUATORS[f"relax.{_name}"] = (
        lambda fn: lambda call, x: fn(x, axis=_axis(call),
                                      keepdims=bool(_attr(call, "keepdims", False))))(_fn)


@register_fold_evaluator("relax.nn.softmax")
def _softmax(call, x):
    axis = _attr(call, "axis", -1)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _static_shape(sinfo_or_call):
    sinfo = sinfo_or_call.struct_info_ if isinstance(sinfo_or_call, Call) else sinfo_or_call
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None:
        return None
    if not all(isinstance(d, IntImm) for d in sinfo.shape_values):
        return None
    return tuple(d.value for d in sinfo.shape_values)


def _as_constant(value, sinfo):
    shape = _static_shape(sinfo)
    value = np.asarray(value)
    if sinfo.dtype is not None:
        value = value.astype(sinfo.dtype.numpy_dtype)
    if shape is not None and value.shape != shape:
        return None
    return Constant(array(value))  # a copy; np.ascontiguousarray would make a 0-d result 1-d


class _Folder(ExprMutator):
    def __init__(self, mod):
        super().__init__()
        self.mod = mod
        self.constants = {}

    def visit_var_(self, var):
        return self.constants.get(id(var)) or super().visit_var_(var)

    def visit_var_binding_(self, binding):
        super().visit_var_binding_(binding)
        value = self.builder.lookup_binding(self.lookup(binding.var))
        if isinstance(value, Constant):
            self.constants[id(binding.var)] = value

    def visit_call_(self, call):
        call = self.builder.normalize(super().visit_call_(call))
        if not isinstance(call.op, Op) or not call.op.purity:
            return call
        if call.op.name == "relax.call_tir":
            return self._fold_call_tir(call)
        evaluate = FOLD_EVALUATORS.get(call.op.name)
        if evaluate is None or not isinstance(call.struct_info_, TensorStructInfo):
            return call
        if not call.args or not all(isinstance(a, Constant) for a in call.args):
            return call
        folded = _as_constant(evaluate(call, *(a.data.numpy() for a in call.args)),
                              call.struct_info_)
        return folded if folded is not None else call

    def _fold_call_tir(self, call):
        if not _CALL_TIR_EVALUATOR or len(call.args) != 2:
            return call
        gvar, args = call.args
        if not isinstance(gvar, GlobalVar) or gvar.name_hint not in self.mod:
            return call
        if not isinstance(args, Tuple) or not all(isinstance(a, Constant) for a in args.fields):
            return call
        out = call.sinfo_args[0]
        outs = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
        if any(_static_shape(s) is None or s.dtype is None for s in outs):
            return call
        results = _CALL_TIR_EVALUATOR[0](self.mod[gvar.name_hint], [a.data for a in args.fields],
                                         outs)
        constants = [_as_constant(r.numpy(), s) for r, s in zip(results, outs)]
        if any(c is None for c in constants):
            return call
        return Tuple(constants) if isinstance(out, TupleStructInfo) else constants[0]


def fold_constant(func, mod=None):
    """``func`` with constant computations evaluated (module docstring)."""
    return _Folder(mod).visit_expr(func)


def FoldConstant():  # noqa: N802  (passes are CamelCase factories)
    """A pass evaluating pure operators and kernels whose inputs are all constants."""
    return function_pass(lambda func, mod, ctx: fold_constant(func, mod), opt_level=0,
                         name="FoldConstant")

