"""The building blocks of ``rvm.relax.frontend.nn`` (TVM's ``tvm.relax.frontend.nn``):
``Tensor``, ``Parameter``, ``Module``, ``ModuleList`` and the default parameter dtype.

A ``Tensor`` wraps a Relax expression whose struct info is a tensor of known
rank; operators on it emit bindings into the function being exported (see
``exporter.py``), so shapes and dtypes are known as soon as a value exists.
A ``Parameter`` is a Tensor that may hold concrete data (``param.data``).

>>> from rvm.relax.frontend import nn
>>> class Scale(nn.Module):
...     def __init__(self):
...         self.weight = nn.Parameter((4,))
...     def forward(self, x):
...         return x * self.weight
>>> [name for name, _ in Scale().named_parameters()]
['weight']
"""
from collections import OrderedDict

import numpy as np

from rvm.ir.expr import PrimExpr
from rvm.relax.expr import Var, const
from rvm.relax.frontend.nn._tensor_op import TensorOp
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
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
        if dtype is None:
            return
        if self._data is not None:
            raise ValueError("Parameter.to: the parameter is bound to data; changing its dtype "
                             "would convert that data")
        self._expr = tensor_placeholder("param", self.shape, dtype)._expr


def _children(module):
    """(name, value) of a module's attributes; a ModuleList's items are named 0, 1, ..."""
    if isinstance(module, ModuleList):
        return [(str(i), item) for i, item in enumerate(module.modules)]
    return [(name, item) for name, item in module.__dict__.items() if not name.startswith("_")]


def _attribute_finder(root, prefix, condition_yield):
    """(dotted name, value) of every attribute under ``root`` (modules, lists, tuples, dicts
    of them, recursively) for which ``condition_yield`` holds, in attribute order."""
    for name, item in _children(root):
        yield from _find(item, prefix + name, condition_yield)


def _find(item, name, condition_yield):
    if condition_yield(item):
        yield name, item
    elif isinstance(item, Module):
        yield from _attribute_finder(item, name + ".", condition_yield)
    elif isinstance(item, (list, tuple)):
        for i, sub in enumerate(item):
            yield from _find(sub, f"{name}.{i}", condition_yield)
    elif isinstance(item, dict):
        for key, sub in item.items():
            yield from _find(sub, f"{name}.{key}", condition_yield)


class Module:
    """Base class of models and layers; submodules and parameters are plain attributes.

    ``forward`` defines the computation; ``export_tvm(spec)`` turns the
    methods named in ``spec`` into Relax functions of an IRModule.
    """

    def named_parameters(self, prefix=""):
        """Yields (dotted name, Parameter) of every parameter, submodules included."""
        yield from _attribute_finder(self, prefix, lambda x: isinstance(x, Parameter))

    def parameters(self):
        """Yields every Parameter, submodules included."""
        for _, param in self.named_parameters():
            yield param

    def state_dict(self, *, prefix="", destination=None):
        """An ordered dict from dotted name to Parameter."""
        destination = OrderedDict() if destination is None else destination
        for name, param in self.named_parameters(prefix):
            destination[name] = param
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Binds the data of ``state_dict``'s parameters (or arrays) to this module's
        parameters of the same names; returns (missing keys, unexpected keys)."""
        own = self.state_dict()
        unexpected = [key for key in state_dict if key not in own]
        for key, value in state_dict.items():
            if key not in own:
                continue
            data = value.data if isinstance(value, Parameter) else value
            if data is None:
                raise ValueError(f"load_state_dict: parameter '{key}' has no data")
            own.pop(key).data = data
        missing = list(own)
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys "
                           f"{unexpected}")
        return missing, unexpected

    def __call__(self, *args, **kwargs):
        forward = getattr(self, "forward", None)
        if forward is None:
            raise NotImplementedError(f"module {type(self).__name__} has no forward method")
        return forward(*args, **kwargs)

    def to(self, dtype=None):
        """Converts the parameters (and the ``dtype`` attribute) of this module and its
        submodules to ``dtype``."""
        for item in self.__dict__.values():
            if isinstance(item, (Module, Parameter, ModuleList)):
                item.to(dtype=dtype)
        if dtype is not None and isinstance(getattr(self, "dtype", None), str):
            self.dtype = dtype

    def export_tvm(self, spec, debug=False):
        """(IRModule, [(name, Parameter)]): one Relax function per method in ``spec``.

        ``spec`` maps a method name to its inputs, ``{"forward": {"x":
        nn.spec.Tensor([1, 4], "float32")}}``; each function takes those
        inputs, then every parameter (named by its dotted path), and has the
        ``num_input`` attribute set to the number of inputs.
        """
        from rvm.relax.frontend.nn.exporter import export
        if debug:
            raise NotImplementedError("export_tvm(debug=True): effects (printing inside the "
                                      "graph) are not supported; export with debug=False")
        return export(self, spec)

    export_rvm = export_tvm


class ModuleList(Module):
    """A list of submodules, named ``0``, ``1``, ... in parameter names."""

    def __init__(self, modules):
        self.modules = list(modules)

    def __iter__(self):
        return iter(self.modules)

    def __getitem__(self, idx):
        return self.modules[idx]

    def __setitem__(self, idx, module):
        self.modules[idx] = module

    def __len__(self):
        return len(self.modules)

    def append(self, module):
        """Adds ``module`` at the end."""
        self.modules.append(module)

    def to(self, dtype=None):
        for module in self.modules:
            module.to(dtype=dtype)

    def forward(self, x):
        """Applies the modules in order."""
        for module in self.modules:
            x = module(x)
        return x
