"""create_prim_func: lowering tensor expressions to a TensorIR PrimFunc.

Every compute becomes a loop nest around one block (spatial axes "S", then
reduction axes "R", with an ``init`` for reductions); every extern becomes a
block around its statement. Tensors in the argument list become parameter
buffers; intermediate tensors become buffers allocated by the root block.
"""
from rvm.tir import op as _op
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import IterVar, Reduce, Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import (Block, BlockRealize, BufferRegion, BufferStore, For, IfThenElse,
                          stmt_seq)
from rvm.tir.stmt_functor import StmtExprMutator
from rvm.te.tensor import ComputeOp, ExternOp, PlaceholderOp, Tensor

_COMBINE = {"sum": _op.add, "prod": _op.multiply, "max": _op.max, "min": _op.min}


def _topo_order(outputs):
    """Operations reachable from ``outputs``, producers before consumers (depth-first, with
    an explicit stack: a chain of thousands of operations is as easy as a short one)."""
    order, seen = [], set()
    for t in outputs:
        if id(t.op) in seen:
            continue
        seen.add(id(t.op))
        stack = [(t.op, iter(t.op.input_tensors))]
        while stack:
            op, inputs = stack[-1]
            for tensor in inputs:
                if id(tensor.op) not in seen:
                    seen.add(id(tensor.op))
                    stack.append((tensor.op, iter(tensor.op.input_tensors)))
                    break
            else:
                stack.pop()
                order.append(op)
    return order


class _ToBufferLoads(StmtExprMutator):
    """Rewrites tensor reads into buffer loads and axis variables into block variables."""

    def __init__(self, buffers, var_map):
        self.buffers = buffers
        self.var_map = var_map

    def visit_producer_load_(self, op):
        indices = [self.visit_expr(i) for i in op.indices]
        return self.buffers[id(op.producer)].vload(indices)

    def visit_var_(self, op):
        return self.var_map.get(id(op), op)


class _SwapBuffers(StmtExprMutator):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_buffer(self, buffer):
        return self.mapping.get(id(buffer), buffer)


def _compute_nest(op, buffers):
    out = buffers[id(op.outputs[0])]
    body = op.body[0]
    reduce = body if isinstance(body, Reduce) else None
    axes = list(op.axis) + list(reduce.axis if reduce is not None else ())
    loop_vars = [Var(iv.var.name_hint, iv.var.dtype) for iv in axes]
    block_axes = [IterVar(iv.dom, Var("v_" + iv.var.name_hint, iv.var.dtype), iv.iter_type)
                  for iv in axes]
    var_map = {id(iv.var): b.var for iv, b in zip(axes, block_axes)}
    rewrite = _ToBufferLoads(buffers, var_map)
    indices = [b.var for b in block_axes[:len(op.axis)]]
    init = None
    if reduce is None:
        stmt = BufferStore(out, rewrite.visit_expr(body), indices)
    else:
        source = rewrite.visit_expr(reduce.source)
        update = BufferStore(out, _COMBINE[reduce.combiner](out.vload(indices), source), indices)
        cond = rewrite.visit_expr(reduce.condition)
        stmt = update if _is_true(cond) else IfThenElse(cond, update)
        init = BufferStore(out, rewrite.visit_expr(reduce.init), indices)
    block = Block(block_axes, [], [], op.name, stmt, init=init)
    reads, writes = get_block_read_write_region(block)
    block = block.with_fields(reads=tuple(reads), writes=tuple(writes))
    nest = BlockRealize(loop_vars, True, block)
    for lv, iv in reversed(list(zip(loop_vars, axes))):
        nest = For(lv, iv.dom.min, iv.dom.extent, "serial", nest)
    return nest


def _is_true(cond):
    return getattr(cond, "value", None) == 1 and cond.dtype == "bool"


def _extern_block(op, buffers):
    mapping = {}
    for placeholder_buf, tensor in zip(op.input_placeholders, op.inputs):
        mapping[id(placeholder_buf)] = buffers[id(tensor)]
    for placeholder_buf, tensor in zip(op.output_placeholders, op.outputs):
        mapping[id(placeholder_buf)] = buffers[id(tensor)]
    body = _SwapBuffers(mapping).visit_stmt(op.body)
    reads = [BufferRegion.full_region(buffers[id(t)]) for t in op.inputs]
    writes = [BufferRegion.full_region(buffers[id(t)]) for t in op.outputs]
    return BlockRealize([], True, Block([], reads, writes, op.name, body))


def create_prim_func(args, index_dtype_override=None):
    """A PrimFunc computing the tensors of ``args`` (Tensors, and scalar tir.Vars).

    The function's parameters are ``args`` in order; tensors computed on the
    way that are not arguments become local buffers (alloc_buffers of the root
    block). Every placeholder used must be an argument. Attributes:
    ``global_symbol = "main"`` and ``tir.noalias = True``.

    >>> from rvm.te.operation import compute, placeholder
    >>> A = placeholder((4,), name="A")
    >>> B = compute((4,), lambda i: A[i] + 1, name="B")
    >>> len(create_prim_func([A, B]).params)
    2
    """
    if index_dtype_override is not None:
        raise NotImplementedError("create_prim_func: index_dtype_override is not supported; "
                                  "build the tensors with the index dtype wanted")
    tensors = [a for a in args if isinstance(a, Tensor)]
    for a in args:
        if not isinstance(a, (Tensor, Var)):
            raise TypeError(f"create_prim_func: arguments must be te.Tensor or tir.Var, got "
                            f"{type(a).__name__} {a!r}")
    buffers, params, local = {}, [], []
    for a in args:
        if isinstance(a, Var):
            params.append(a)
            continue
        if id(a) in buffers:
            raise ValueError(f"create_prim_func: tensor {a.name!r} appears twice in the arguments")
        buffers[id(a)] = decl_buffer(a.shape, a.dtype, name=a.name)
        params.append(buffers[id(a)])
    stmts = []
    for op in _topo_order(tensors):
        if isinstance(op, PlaceholderOp):
            if id(op.outputs[0]) not in buffers:
                raise ValueError(f"create_prim_func: placeholder {op.name!r} is used but is not "
                                 "in the argument list")
            continue
        for t in op.outputs:
            if id(t) not in buffers:
                buffers[id(t)] = decl_buffer(t.shape, t.dtype, name=t.name)
                local.append(buffers[id(t)])
        if isinstance(op, ComputeOp):
            stmts.append(_compute_nest(op, buffers))
        elif isinstance(op, ExternOp):
            stmts.append(_extern_block(op, buffers))
        else:
            raise TypeError(f"create_prim_func: unsupported operation {type(op).__name__}")
    if not stmts:
        raise ValueError("create_prim_func: nothing to compute; expected some compute or extern "
                         "tensors among the arguments")
    root = Block([], [], [], "root", stmt_seq(*stmts), alloc_buffers=local)
    body = BlockRealize([], True, root)
    attrs = {"global_symbol": "main", "tir.noalias": True}
    layout_free = _layout_free_params(args, tensors)
    if layout_free:
        attrs["layout_free_buffers"] = layout_free
    return PrimFunc(params, body, attrs=attrs)


def _layout_free_params(args, tensors):
    """Parameter positions of tensors some compute marks ``layout_free_placeholders``."""
    marked = set()
    for op in _topo_order(tensors):
        for t in getattr(op, "attrs", {}).get("layout_free_placeholders", ()):
            marked.add(id(t))
    return [k for k, a in enumerate(args) if id(a) in marked]
