"""PyTorch-like modules that build Relax inside an active BlockBuilder function scope
(TVM's ``tvm.relax.testing.nn``).

Parameters and placeholders are Relax Vars; calling a module emits its
bindings into the current function; ``init_params`` makes zero-filled
arrays for a built ``main``'s parameters.

>>> from rvm import relax
>>> from rvm.relax.testing import nn
>>> bb = relax.BlockBuilder()
>>> with bb.function("main"):
...     model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
...     data = nn.Placeholder((1, 4), name="data")
...     out = model(data)
...     gv = bb.emit_func_output(out, params=[data] + model.parameters())
>>> [p.name_hint for p in bb.get()["main"].params]
['data', 'linear_weight', 'linear_bias', 'linear_weight1', 'linear_bias1']
"""
import numpy as np

from rvm.relax import op
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.ndarray import array
from rvm.tir.expr import IntImm


def _builder(who):
    builder = BlockBuilder.current()
    if builder is None:
        raise RuntimeError(f"nn.{who}: no BlockBuilder function scope is active; call it "
                           "inside 'with bb.function(...)'")
    return builder


def emit(expr, name_hint=""):
    """Emits ``expr`` into the current BlockBuilder function; returns its Var."""
    return _builder("emit").emit(expr, name_hint=name_hint)


def emit_te(func, *args, **kwargs):
    """Emits the TE function ``func`` applied to ``args`` into the current function."""
    return _builder("emit_te").emit_te(func, *args, **kwargs)


def _unique_name(name):
    """``name`` made unique in the current function when a builder is active (Relax allows
    duplicate names; unique ones read better)."""
    builder = BlockBuilder.current()
    return name if builder is None else builder.get_unique_name(name)


def _tensor_var(cls_name, shape, dtype, name):
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"the shape of {cls_name} is expected to be a list or a tuple, got "
                        f"{type(shape).__name__}")
    return _unique_name(name), TensorStructInfo(list(shape), dtype)


class Placeholder(Var):
    """A model input: a Var of tensor struct info (name made unique in the function)."""

    def __init__(self, shape, dtype="float32", name="data"):
        super().__init__(*_tensor_var("Placeholder", shape, dtype, name))


class Parameter(Var):
    """A model weight: a Var of tensor struct info (name made unique in the function)."""

    def __init__(self, shape, dtype="float32", name="param"):
        super().__init__(*_tensor_var("Parameter", shape, dtype, name))


class Module:
    """Base class of modules: ``forward`` emits the computation; ``parameters()`` lists the
    Parameters held in attributes (submodules, lists, tuples and dicts included)."""

    def parameters(self):
        """The Parameters of this module and its submodules, in attribute order."""
        return _unpack_params(self.__dict__)

    def forward(self, input):  # noqa: A002  (TVM's name)
        """Emits the computation; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


def _unpack_params(value):
    if isinstance(value, Parameter):
        return [value]
    if isinstance(value, Module):
        return value.parameters()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [p for item in value for p in _unpack_params(item)]
    return []


def init_params(mod):
    """Zero-filled float32 arrays for the parameters of ``mod["main"]`` whose names do not
    start with ``data`` (the inputs), in order; every such shape must be static."""
    params = []
    for var in mod["main"].params:
        if var.name_hint.startswith("data"):
            continue
        sinfo = var.struct_info_
        dims = sinfo.shape_values if isinstance(sinfo, TensorStructInfo) else None
        if dims is None or not all(isinstance(d, IntImm) for d in dims):
            raise TypeError(f"init_params: cannot initialize parameter '{var.name_hint}' of "
                            f"unknown shape ({sinfo!r})")
        params.append(array(np.zeros([int(d.value) for d in dims], "float32")))
    return params


class Sequential(Module):
    """Applies its modules one after another."""

    def __init__(self, *modules):
        self.modules = modules

    def forward(self, input):  # noqa: A002
        """The output of the last module."""
        for module in self.modules:
            input = module(input)
        return input


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, input):  # noqa: A002
        """Emits ReLU of ``input``."""
        return emit(op.nn.relu(input))


class LogSoftmax(Module):
    """log(softmax(x)) over the last axis."""

    def forward(self, input):  # noqa: A002
        """Emits log-softmax of ``input``."""
        return emit(op.nn.log_softmax(input))


class Linear(Module):
    """``y = x W + b`` with ``weight`` of shape (in_features, out_features)."""

    def __init__(self, in_features, out_features, bias=True):
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter((in_features, out_features), name="linear_weight")
        self.bias = Parameter((out_features,), name="linear_bias") if bias else None

    def forward(self, input):  # noqa: A002
        """Emits the linear transformation of ``input``."""
        y = emit(op.matmul(input, self.weight))
        if self.bias is not None:
            y = emit(op.add(y, self.bias))
        return y
