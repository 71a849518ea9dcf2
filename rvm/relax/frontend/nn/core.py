"""The values of ``rvm.relax.frontend.nn`` (TVM's ``tvm.relax.frontend.nn``): ``Tensor``,
``Parameter``, the default parameter dtype, and ``wrap_nested``, which emits an expression
into the function being exported and wraps the result.

A ``Tensor`` wraps a Relax expression whose struct info is a tensor of known
shape; operators on it emit bindings into the function being exported (see
``exporter.py``), so shapes and dtypes are known as soon as a value exists.
A ``Parameter`` is a Tensor that may hold concrete data (``param.data``).

>>> p = Parameter((2, 3))
>>> p.shape, p.dtype, p.data is None
([2, 3], 'float32', True)
"""
import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import TupleGetItem, Var, const
from rvm.relax.frontend.nn._tensor_op import TensorOp
from rvm.relax.struct_info import TensorStructInfo, TupleStructInfo
from rvm.runtime.ndarray import NDArray, array, from_dlpack
from rvm.tir.expr import IntImm
from rvm.tir.expr import Var as TirVar

_DEFAULT_DTYPE = ["float32"]


def get_default_dtype():
    """The dtype of parameters created without one (``"float32"`` unless changed)."""
    return _DEFAULT_DTYPE[0]


def set_default_dtype(dtype):
    """Sets the dtype of parameters created without one."""
    if not isinstance(dtype, str):
        raise TypeError(f"set_default_dtype: expected a dtype string, got {type(dtype).__name__}")
    _DEFAULT_DTYPE[0] = dtype


def _shape_dim(dim, who):
    """A dimension of a placeholder: an int, a str (a symbolic int64 dimension of that
    name) or an int64 PrimExpr."""
    if isinstance(dim, (bool, np.bool_)):
        raise TypeError(f"{who}: a dimension must be an int, a str or a PrimExpr, got bool")
    if isinstance(dim, (int, np.integer)):
        if dim < 0:
            raise ValueError(f"{who}: dimensions must be non-negative, got {int(dim)}")
        return int(dim)
    if isinstance(dim, str):
        return TirVar(dim, "int64")
    if isinstance(dim, IntImm):
        return int(dim.value)
    if isinstance(dim, PrimExpr):
        return dim
    raise TypeError(f"{who}: a dimension must be an int, a str or a PrimExpr, "
                    f"got {type(dim).__name__}")


def tensor_placeholder(name, shape, dtype):
    """A Tensor over a fresh Relax Var ``name`` of the given shape and dtype."""
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"tensor '{name}': shape must be a list or tuple, got "
                        f"{type(shape).__name__}")
    dims = [_shape_dim(d, f"tensor '{name}'") for d in shape]
    return Tensor(_expr=Var(name, TensorStructInfo(dims, dtype)))


class Tensor(TensorOp):
    """A symbolic tensor: a Relax expression with a tensor struct info of known shape.

    Tensors are made by the exporter (inputs), by ``Parameter`` and by the
    operators of ``nn.op``; ``Tensor.from_const`` and ``Tensor.from_scalar``
    make constants.
    """

    def __init__(self, *, _expr):
        sinfo = getattr(_expr, "struct_info_", None)
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None:
            raise TypeError("nn.Tensor wraps an expression whose struct info is a tensor of "
                            f"known shape, got {sinfo!r}")
        self._expr = _expr

    @staticmethod
    def from_const(data):
        """A Tensor holding the constant ``data`` (numpy array, NDArray or nested lists)."""
        return Tensor(_expr=const(data))

    @staticmethod
    def from_scalar(data, dtype):
        """A 0-d Tensor holding the scalar ``data`` as ``dtype``."""
        return Tensor(_expr=const(data, dtype=dtype))

    @staticmethod
    def placeholder(shape, dtype, name="tensor"):
        """A Tensor over a fresh Relax Var (a function input)."""
        return tensor_placeholder(name, shape, dtype)

    @property
    def shape(self):
        """The dimensions: ints where static, PrimExprs where symbolic."""
        return [int(d.value) if isinstance(d, IntImm) else d
                for d in self._expr.struct_info_.shape_values]

    @property
    def ndim(self):
        """The rank."""
        return self._expr.struct_info_.ndim

    @property
    def dtype(self):
        """The element type as a string."""
        return str(self._expr.struct_info_.dtype)

    def __repr__(self):
        return f'Tensor({self.shape}, "{self.dtype}")'


class Parameter(Tensor):
    """A weight of a module: a Tensor that may be bound to concrete data (``.data``).

    >>> p = Parameter((2, 3))
    >>> p.shape, p.dtype, p.data is None
    ([2, 3], 'float32', True)
    """

    def __init__(self, shape, dtype=None):
        if dtype is None:
            dtype = get_default_dtype()
        super().__init__(_expr=tensor_placeholder("param", shape, dtype)._expr)
        self._data = None

    @property
    def data(self):
        """The bound value (an NDArray) or None."""
        return self._data

    @data.setter
    def data(self, value):
        if value is None:
            self._data = None
            return
        if isinstance(value, np.ndarray):
            value = array(value)
        elif not isinstance(value, NDArray):
            if not hasattr(value, "__dlpack__"):
                raise TypeError("Parameter.data: expected None, an NDArray, a numpy array or a "
                                f"DLPack tensor, got {type(value).__name__}")
            value = from_dlpack(value)
        if tuple(value.shape) != tuple(self.shape):
            raise ValueError(f"Parameter.data: shape mismatch: expected {tuple(self.shape)}, "
                             f"got {tuple(value.shape)}")
        if str(value.dtype) != self.dtype:
            raise ValueError(f"Parameter.data: dtype mismatch: expected {self.dtype}, "
                             f"got {value.dtype}")
        self._data = value

    def to(self, dtype=None):
        """Changes the dtype of an unbound parameter."""
        if dtype is None or dtype == self.dtype:
            return
        if self._data is not None:
            raise ValueError("Parameter.to: the parameter is bound to data; changing its dtype "
                             "would convert that data")
        self._expr = tensor_placeholder("param", self.shape, dtype)._expr


def wrap_nested(expr, name):
    """Emits ``expr`` as binding ``name`` into the current function and wraps the result: a
    Tensor, or a tuple of Tensors for a tuple-valued expression."""
    builder = BlockBuilder.current()
    if builder is None:
        raise RuntimeError(f"nn.op '{name}': no function is being built; nn operators run "
                           "inside Module.export_tvm (or an active BlockBuilder function scope)")
    var = builder.emit(expr, name_hint=name)
    sinfo = var.struct_info_
    if isinstance(sinfo, TensorStructInfo):
        return Tensor(_expr=var)
    if isinstance(sinfo, TupleStructInfo):
        return tuple(wrap_nested(TupleGetItem(var, i), f"{name}.{i}")
                     for i in range(len(sinfo.fields)))
    raise TypeError(f"nn.op '{name}': the result has struct info {sinfo!r}; expected a tensor "
                    "or a tuple of tensors")


Tensor._wrap = staticmethod(wrap_nested)
