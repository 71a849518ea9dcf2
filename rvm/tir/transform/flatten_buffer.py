"""FlattenBuffer: multi-dimensional buffer accesses become one-dimensional.

Every load and store through an N-d buffer goes through a 1-d buffer over
the same data, indexed by the row-major offset (strides and elem_offset
included); allocations get one extent. The parameters' N-d buffers stay in
``buffer_map`` (the kernel prologue checks shapes against them), and so do
buffers passed whole to ``call_packed`` (they travel as DLTensors).

    B[i, j] = A[i, j] * 2.0        ->        B_flat[i * 8 + j] = A_flat[i * 8 + j] * 2.0
"""
from rvm.tir import op as _op
from rvm.tir.buffer import Buffer
from rvm.tir.expr import BufferLoad
from rvm.tir.stmt import Allocate, BufferStore, DeclBuffer
from rvm.tir.stmt_functor import StmtExprMutator
from rvm.tir.transform.prim_func_pass import prim_func_pass


def _flat_size(buffer):
    size = _op.const(1, buffer.shape[0].dtype if buffer.shape else "int32")
    for dim in buffer.shape:
        size = _op.multiply(size, dim)
    return size


class _Flattener(StmtExprMutator):
    def __init__(self):
        self._flat = {}

    def flat(self, buffer):
        """The 1-d buffer over ``buffer``'s data (one per buffer)."""
        if len(buffer.shape) == 1 and not buffer.strides and _is_zero(buffer.elem_offset):
            return buffer
        flat = self._flat.get(id(buffer))
        if flat is None:
            flat = Buffer(buffer.data, buffer.dtype, (_flat_size(buffer),), name=buffer.name,
                          scope=buffer.scope)
            self._flat[id(buffer)] = (flat, buffer)
            return flat
        return flat[0]

    def _index(self, buffer, indices):
        if not buffer.shape:
            return (buffer.elem_offset,)
        if self.flat(buffer) is buffer:
            return tuple(indices)
        return (buffer.offset_of(indices),)

    def visit_buffer_load_(self, op):
        indices = [self.visit_expr(i) for i in op.indices]
        flat, index = self.flat(op.buffer), self._index(op.buffer, indices)
        if flat is op.buffer and all(a is b for a, b in zip(index, op.indices)):
            return op
        return BufferLoad(flat, index, span=op.span)

    def visit_buffer_store_(self, op):
        value = self.visit_expr(op.value)
        indices = [self.visit_expr(i) for i in op.indices]
        flat, index = self.flat(op.buffer), self._index(op.buffer, indices)
        if flat is op.buffer and value is op.value and all(
                a is b for a, b in zip(index, op.indices)):
            return op
        return BufferStore(flat, value, index, span=op.span)

    def visit_allocate_(self, op):
        body = self.visit_stmt(op.body)
        if len(op.extents) == 1 and body is op.body:
            return op
        extent = _op.const(1, op.extents[0].dtype if op.extents else "int32")
        for e in op.extents:
            extent = _op.multiply(extent, self.visit_expr(e))
        return Allocate(op.buffer_var, op.dtype, (extent,), op.condition, body,
                        op.annotations, span=op.span)

    def visit_decl_buffer_(self, op):
        flat, body = self.flat(op.buffer), self.visit_stmt(op.body)
        if flat is op.buffer and body is op.body:
            return op
        return DeclBuffer(flat, body, span=op.span)

    def visit_call_(self, op):
        # Whole buffers passed to packed functions keep their shape: they become DLTensors.
        args = [a if isinstance(a, Buffer) else self.visit_expr(a) for a in op.args]
        if all(a is b for a, b in zip(args, op.args)):
            return op
        return type(op)(op.dtype, op.op, args, span=op.span)


def _is_zero(expr):
    return getattr(expr, "value", None) == 0


def flatten_buffer(func):
    """``func`` with every buffer access one-dimensional."""
    body = _Flattener().visit(func.body)
    return func if body is func.body else func.with_body(body)


def FlattenBuffer():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``flatten_buffer``."""
    return prim_func_pass(lambda f, mod, ctx: flatten_buffer(f), "FlattenBuffer")
