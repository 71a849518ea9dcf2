"""FoldConstant: evaluate at compile time what only depends on constants.

What is folded:

- a ``call_tir`` whose arguments are all constants and whose outputs have static
  shapes: its PrimFunc is lowered and run by the reference evaluator of TIR
  (``rvm.tir.eval``), the definition of what a kernel computes (a kernel calling an
  intrinsic it does not define, ``call_extern``, stays);
- a pure operator call whose arguments are constants (tensors, shapes, values) and
  whose result is a tensor of static shape: it is legalized with its rule in
  ``LEGALIZE_RULES``, the operator's one definition, and that kernel call is folded
  as above (an operator without a rule stays);
- uses of a variable bound to a constant, which then see the constant.

Bindings left unused by folding stay until DeadCodeElimination removes them.
"""
import numpy as np

from rvm.ir.expr import GlobalVar
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import (
    Call, Constant, DataTypeImm, PrimValue, ShapeExpr, StringImm, Tuple,
)
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.relax.transform.function_pass import function_pass
from rvm.relax.transform.legalize_ops import LEGALIZE_RULES
from rvm.runtime.ndarray import array, empty
from rvm.support.recursion import deep_recursion
from rvm.tir.eval import EvalError, evaluate_prim_func
from rvm.tir.expr import FloatImm, IntImm
from rvm.tir.transform.pipeline import lower_module


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
            return self._fold_call_tir(call, self.mod)
        rule = LEGALIZE_RULES.get(call.op.name)
        if rule is None or _static_shape(call) is None or call.struct_info_.dtype is None:
            return call
        if not any(isinstance(a, Constant) for a in call.args) \
                or not all(_is_constant(a) for a in call.args):
            return call
        scratch = BlockBuilder()  # no function scope: a rule that emits bindings raises
        try:
            legal = rule(scratch, call)
        except ValueError:  # that, or a rule refusing its arguments (LegalizeOps reports it)
            return call
        if not (isinstance(legal, Call) and isinstance(legal.op, Op)
                and legal.op.name == "relax.call_tir"):
            return call
        folded = self._fold_call_tir(legal, scratch.get())
        return folded if isinstance(folded, Constant) else call

    def _fold_call_tir(self, call, mod):
        if mod is None or len(call.args) != 2:
            return call
        gvar, args = call.args
        if not isinstance(gvar, GlobalVar) or gvar.name_hint not in mod:
            return call
        if not isinstance(args, Tuple) or not all(isinstance(a, Constant) for a in args.fields):
            return call
        out = call.sinfo_args[0]
        outs = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
        if any(_static_shape(s) is None or s.dtype is None for s in outs):
            return call
        results = [empty(_static_shape(s), s.dtype) for s in outs]
        with deep_recursion():
            lowered = lower_module(mod[gvar.name_hint])
            func = next(iter(lowered.functions.values()))
            try:
                evaluate_prim_func(func, [a.data for a in args.fields] + results,
                                   gvar.name_hint)
            except EvalError:  # an intrinsic only compiled code defines: it runs at run time
                return call
        constants = [_as_constant(r.numpy(), s) for r, s in zip(results, outs)]
        if any(c is None for c in constants):
            return call
        return Tuple(constants) if isinstance(out, TupleStructInfo) else constants[0]


def _is_constant(arg):
    """Whether a call argument is known at compile time (a legalization rule reads it)."""
    if isinstance(arg, (Constant, StringImm, DataTypeImm)):
        return True
    if isinstance(arg, ShapeExpr):
        return all(isinstance(d, IntImm) for d in arg.values)
    return isinstance(arg, PrimValue) and isinstance(arg.value, (IntImm, FloatImm))


def fold_constant(func, mod=None):
    """``func`` with constant computations evaluated (module docstring)."""
    return _Folder(mod).visit_expr(func)


def FoldConstant():  # noqa: N802  (passes are CamelCase factories)
    """A pass evaluating pure operators and kernels whose inputs are all constants.

    >>> import numpy as np
    >>> from rvm import relax
    >>> bb = relax.BlockBuilder()
    >>> c = relax.const(np.arange(3, dtype="float32"))
    >>> with bb.function("main", []):
    ...     out = bb.emit(relax.op.add(c, c))
    ...     _ = bb.emit_func_output(out)
    >>> folded = FoldConstant()(bb.get())
    >>> folded["main"].body.blocks[0].bindings[0].value.data.numpy().tolist()
    [0.0, 2.0, 4.0]
    """
    return function_pass(lambda func, mod, ctx: fold_constant(func, mod), opt_level=0,
                         name="FoldConstant")
