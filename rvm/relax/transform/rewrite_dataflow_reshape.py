"""RewriteDataflowReshape: a call_tir of a kernel that only reshapes becomes ``R.reshape``.

LegalizeOps turns every reshape (and flatten) into a copying kernel. Inside a
dataflow block, a binding ``lv = R.call_tir(f, (x,), out_sinfo=R.Tensor(s, t))``
whose PrimFunc ``f`` is only a reshape (``rvm.relax.analysis.has_reshape_pattern``)
becomes ``lv = R.reshape(x, s)``, which VMBuiltinLower lowers to
``vm.builtin.reshape``: a view of ``x``'s memory with the new shape, no copy.

As in TVM, a binding is left alone when:

- its variable is a dataflow block output (a value leaving the block is never
  a view: the caller may keep it while the memory it views is reused);
- the kernel does more than move elements (a reshape fused with other
  operators, a transpose, a cast), or reads more than one of its arguments;
- the element counts of ``x`` and of the result are not provably equal, or
  either shape is unknown.

The reshape kernels themselves stay in the module (DeadCodeElimination drops
those nothing calls any more). StaticPlanBlockMemory sees ``R.reshape`` as a
value that may alias its argument, so the storage of ``x`` stays reserved as
long as the view is used.

>>> from rvm.relax.block_builder import BlockBuilder
>>> from rvm.relax.expr import Var
>>> from rvm.relax.op import exp, reshape
>>> from rvm.relax.struct_info import TensorStructInfo
>>> from rvm.relax.transform.legalize_ops import LegalizeOps
>>> bb = BlockBuilder()
>>> x = Var("x", TensorStructInfo((2, 6), "float32"))
>>> with bb.function("main", [x]):
...     with bb.dataflow():
...         y = bb.emit(reshape(x, (3, 4)))
...         z = bb.emit_output(exp(y))
...     _ = bb.emit_func_output(z)
>>> mod = RewriteDataflowReshape()(LegalizeOps()(bb.get()))
>>> mod["main"].body.blocks[0].bindings[0].value.op.name
'relax.reshape'
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.reshape_pattern import reshape_source_param
from rvm.relax.binding import DataflowBlock, VarBinding
from rvm.relax.expr import Call, DataflowVar, ShapeExpr, Tuple
from rvm.relax.op.manipulate import reshape
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.tir.arith import Analyzer
from rvm.tir.expr import IntImm
from rvm.tir.function import PrimFunc
from rvm.relax.transform.function_pass import dataflowblock_pass
from rvm.relax.transform.lowering_util import normalized


def _count(values):
    total = IntImm("int64", 1)
    for dim in values:
        total = total * dim
    return total


def _reshape_of(call, mod):
    """``R.reshape(x, shape)`` equivalent to the call_tir ``call``, or None."""
    if not (isinstance(call, Call) and isinstance(call.op, Op)
            and call.op.name == "relax.call_tir"):
        return None
    callee, args = call.args[0], call.args[1]
    if not isinstance(callee, GlobalVar) or callee.name_hint not in mod \
            or not isinstance(args, Tuple):
        return None
    func = mod[callee.name_hint]
    if not isinstance(func, PrimFunc):
        return None
    source = reshape_source_param(func)
    # the output buffer is the parameter right after the inputs (call_tir's convention)
    if source is None or source >= len(args.fields) or \
            func.params[len(args.fields)] not in func.buffer_map:
        return None
    out = call.struct_info_
    x = args.fields[source]
    sinfo = x.struct_info_
    if not (isinstance(out, TensorStructInfo) and isinstance(sinfo, TensorStructInfo)):
        return None
    if out.shape_values is None or sinfo.shape_values is None or out.dtype != sinfo.dtype:
        return None
    src_buffer = func.buffer_map[func.params[source]]
    dst_buffer = func.buffer_map[func.params[len(args.fields)]]
    if len(sinfo.shape_values) != len(src_buffer.shape) or \
            len(out.shape_values) != len(dst_buffer.shape):
        return None
    if not Analyzer().can_prove_equal(_count(sinfo.shape_values), _count(out.shape_values)):
        return None
    return normalized(reshape(x, ShapeExpr(list(out.shape_values))))


def rewrite_dataflow_reshape(block, mod):
    """``block`` (a DataflowBlock) with its reshape kernel calls as ``R.reshape`` (module
    docstring); ``block`` itself when nothing changed."""
    bindings = []
    for binding in block.bindings:
        if isinstance(binding, VarBinding) and isinstance(binding.var, DataflowVar):
            view = _reshape_of(binding.value, mod)
            if view is not None:
                binding = VarBinding(binding.var, view, binding.span)
        bindings.append(binding)
    if all(a is b for a, b in zip(bindings, block.bindings)):
        return block
    return DataflowBlock(bindings, block.span)


def RewriteDataflowReshape():  # noqa: N802  (passes are CamelCase factories)
    """A pass turning call_tir of reshape-only kernels in dataflow blocks into ``R.reshape``
    (module docstring)."""
    return dataflowblock_pass(lambda block, mod, ctx: rewrite_dataflow_reshape(block, mod),
                              opt_level=0, name="RewriteDataflowReshape")
