"""Buffer: a typed multi-dimensional view of memory, with possibly symbolic shape."""
from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType
from rvm.tir import op as _op
from rvm.tir.expr import BufferLoad, IntImm, Var


def _index_dtype(dims):
    """int64 when any symbolic dimension is int64, else int32 (TVM's default index type)."""
    for d in dims:
        if isinstance(d, PrimExpr) and d.dtype == "int64":
            return "int64"
    return "int32"


def _as_dims(values, dtype, what):
    dims = []
    for v in values:
        if isinstance(v, PrimExpr):
            if not (v.dtype.is_int or v.dtype.is_uint):
                raise TypeError(f"buffer {what} must be integers, got {v.dtype} {v!r}")
            dims.append(v)
        elif isinstance(v, int) or hasattr(v, "__index__"):
            dims.append(_op.const(int(v), dtype))
        else:
            raise TypeError(f"buffer {what} must be ints or integer PrimExprs, "
                            f"got {type(v).__name__} {v!r}")
    return tuple(dims)


class Buffer(Node):
    """A buffer: ``data`` (a handle Var), ``dtype``, ``shape``, ``strides``, ``elem_offset``.

    Empty ``strides`` means compact row-major layout. ``name`` is not part of
    the structure (buffers are matched through their data variable, so
    renamed buffers compare equal). ``buf[i, j]`` reads an element, ``buf[0:4, j]`` is a
    region (rvm.tir.analysis.region.buffer_subscript), ``vstore`` writes (rvm.tir.stmt).

    >>> A = decl_buffer((4, 8), "float32", name="A")
    >>> A[1, 2].dtype == "float32"
    True
    """

    _fields = ("data", "dtype", "shape", "strides", "elem_offset", "scope")
    _binding_fields = ("data", "shape", "strides", "elem_offset")
    _declared_by_parent = True  # defines its variables only where it is declared

    def __init__(self, data, dtype, shape, strides=(), elem_offset=None, name="buffer",
                 scope="global", span=None):
        self.dtype = DataType(dtype)
        index_dtype = _index_dtype(list(shape) + list(strides or ()))
        self.shape = _as_dims(shape, index_dtype, "shape")
        self.strides = _as_dims(strides or (), index_dtype, "strides")
        if elem_offset is None:
            elem_offset = _op.const(0, index_dtype)
        self.elem_offset = _op.convert(elem_offset, index_dtype)
        if not isinstance(data, Var) or data.dtype != "handle":
            raise TypeError(f"buffer data must be a Var of dtype handle, got {data!r}")
        self.data = data
        self.name = name
        self.scope = scope
        self.span = span

    @property
    def ndim(self):
        return len(self.shape)

    def _indices(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return [_op.convert(i, self.shape[k].dtype if k < len(self.shape) else None)
                for k, i in enumerate(indices)]

    def vload(self, indices, dtype=None):
        """Reads the element at ``indices`` (``dtype`` is accepted for TVM compatibility)."""
        load = BufferLoad(self, self._indices(tuple(indices)))
        if dtype is not None and DataType(dtype) != load.dtype:
            raise ValueError(f"vload of {self.name!r}: expected dtype {load.dtype}, got {dtype}")
        return load

    def compact_strides(self):
        """The row-major strides of this buffer (its ``strides`` when given)."""
        if self.strides:
            return self.strides
        strides = []
        acc = _op.const(1, _index_dtype(self.shape))
        for dim in reversed(self.shape):
            strides.append(acc)
            acc = _op.multiply(acc, dim)
        return tuple(reversed(strides))

    def offset_of(self, indices):
        """The flat element offset of ``indices`` (elem_offset plus index times stride)."""
        indices = self._indices(tuple(indices))
        if len(indices) != len(self.shape):
            raise ValueError(f"buffer {self.name!r} has {len(self.shape)} dimensions, "
                             f"got {len(indices)} indices")
        offset = self.elem_offset
        for index, stride in zip(indices, self.compact_strides()):
            offset = _op.add(offset, _op.multiply(index, stride))
        return offset

    def __repr__(self):
        dims = ", ".join(repr(d) for d in self.shape)
        return f"T.Buffer({self.name}, ({dims}{',' if len(self.shape) == 1 else ''}), {self.dtype})"


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None, elem_offset=None,
                scope="global", span=None):
    """A new Buffer with a fresh data variable named after the buffer.

    >>> n = Var("n", "int64")
    >>> str(decl_buffer((n, 4), name="X").shape[1].dtype)
    'int64'
    """
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    if data is None:
        data = Var(name, "handle")
    return Buffer(data, dtype, tuple(shape), tuple(strides or ()), elem_offset, name, scope,
                  span)


def is_constant_shape(buffer):
    """Whether every dimension of ``buffer`` is a constant."""
    return all(isinstance(d, IntImm) for d in buffer.shape)
