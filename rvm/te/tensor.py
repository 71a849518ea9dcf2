"""Tensor expressions: Tensors, the operations producing them, and element reads."""
from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType
from rvm.tir import op as _op
from rvm.tir.expr import PrimExprWithOp, Reduce
from rvm.tir.stmt_functor import StmtExprVisitor


def _index_dtype(dims):
    for d in dims:
        if isinstance(d, PrimExpr) and d.dtype == "int64":
            return "int64"
    return "int32"


def convert_shape(shape):
    """A shape as a tuple of integer PrimExprs (ints become int32, or int64 next to int64 dims)."""
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    shape = tuple(shape)
    dtype = _index_dtype(shape)
    dims = []
    for d in shape:
        if isinstance(d, PrimExpr):
            if not (d.dtype.is_int or d.dtype.is_uint):
                raise TypeError(f"shape dimensions must be integers, got {d.dtype} {d!r}")
            dims.append(d)
        elif isinstance(d, int) or hasattr(d, "__index__"):
            dims.append(_op.const(int(d), dtype))
        else:
            raise TypeError(f"shape dimensions must be ints or integer PrimExprs, got "
                            f"{type(d).__name__} {d!r}")
    return tuple(dims)


class Operation(Node):
    """Base of the operations that produce tensors (placeholder, compute, extern)."""

    name = ""
    tag = ""

    @property
    def input_tensors(self):
        """The tensors this operation reads."""
        return []

    @property
    def num_outputs(self):
        return 1

    def output(self, index=0):
        """The ``index``-th output Tensor."""
        return self.outputs[index]


class Tensor(Node):
    """An n-dimensional value produced by an operation: ``shape``, ``dtype``, ``name``.

    ``T[i, j]`` reads an element inside a compute definition.

    >>> from rvm.te.operation import placeholder
    >>> A = placeholder((4, 8), name="A")
    >>> str(A[0, 1].dtype)
    'float32'
    """

    _fields = ("shape", "dtype")

    def __init__(self, shape, dtype, op, value_index=0, name=None):
        self.shape = convert_shape(shape)
        self.dtype = DataType(dtype)
        self.op = op
        self.value_index = value_index
        self.name = name if name is not None else op.name

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise ValueError(f"tensor {self.name!r} has {len(self.shape)} dimensions, got "
                             f"{len(indices)} indices")
        converted = [_op.convert(i, d.dtype) for i, d in zip(indices, self.shape)]
        return ProducerLoad(self, converted)

    def __call__(self, *indices):
        """``T(i, j)``: the same as ``T[i, j]`` (TVM's call form)."""
        return self[tuple(indices)]

    def __repr__(self):
        dims = ", ".join(repr(d) for d in self.shape)
        return f"Tensor(shape=({dims}), op.name={self.name})"


class ProducerLoad(PrimExprWithOp):
    """``tensor[indices]`` inside a tensor expression (becomes a BufferLoad in a PrimFunc)."""

    _fields = ("producer", "indices")

    def __init__(self, producer, indices, span=None):
        self.producer = producer
        self.indices = tuple(indices)
        self.dtype = producer.dtype
        self.span = span

    def __repr__(self):
        return f"{self.producer.name}[{', '.join(repr(i) for i in self.indices)}]"


class PlaceholderOp(Operation):
    """An input tensor."""

    _fields = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = convert_shape(shape)
        self.dtype = DataType(dtype)
        self.outputs = [Tensor(self.shape, self.dtype, self)]


class ComputeOp(Operation):
    """A tensor defined elementwise by ``body`` over the spatial ``axis`` (and, for a
    reduction, over ``reduce_axis``)."""

    _fields = ("name", "tag", "attrs", "axis", "reduce_axis", "body")

    def __init__(self, name, tag, attrs, axis, body):
        self.name = name
        self.tag = tag
        self.attrs = dict(attrs or {})
        self.axis = tuple(axis)
        self.body = tuple(body)
        self.reduce_axis = self.body[0].axis if isinstance(self.body[0], Reduce) else ()
        shape = tuple(iv.dom.extent for iv in self.axis)
        self.outputs = [Tensor(shape, b.dtype, self, k) for k, b in enumerate(self.body)]

    @property
    def input_tensors(self):
        return _tensors_read(self.body)


class ExternOp(Operation):
    """A tensor computed by an opaque statement (e.g. a ``call_packed``) over buffers.

    ``input_placeholders``/``output_placeholders`` are the Buffers ``body`` refers to.
    """

    _fields = ("name", "tag", "attrs", "inputs", "input_placeholders", "output_placeholders",
               "body")

    def __init__(self, name, tag, attrs, inputs, input_placeholders, output_placeholders, body):
        self.name = name
        self.tag = tag
        self.attrs = dict(attrs or {})
        self.inputs = tuple(inputs)
        self.input_placeholders = tuple(input_placeholders)
        self.output_placeholders = tuple(output_placeholders)
        self.body = body
        self.outputs = [Tensor(b.shape, b.dtype, self, k, name=name)
                        for k, b in enumerate(self.output_placeholders)]

    @property
    def input_tensors(self):
        return list(self.inputs)

    @property
    def num_outputs(self):
        return len(self.outputs)


def _tensors_read(exprs):
    found = []

    class _Collect(StmtExprVisitor):
        def visit_producer_load_(self, op):
            if not any(t is op.producer for t in found):
                found.append(op.producer)
            for index in op.indices:
                self.visit_expr(index)

    collector = _Collect()
    for e in exprs:
        collector.visit(e)
    return found
