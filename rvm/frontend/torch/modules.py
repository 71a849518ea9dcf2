"""Converters of ``torch.nn`` layers met as ``call_module`` nodes by ``from_fx``.

``MODULE_CONVERTERS`` maps a layer's class name to ``fn(importer, node, module)``;
the layer's parameters enter through ``importer.tensor`` (constants, or
parameters of ``main``).
"""
from rvm.relax.op import unary
from rvm.relax.op.nn import activation
from rvm.frontend.torch.converters import linear
from rvm.frontend.torch.converters_shape import flatten

MODULE_CONVERTERS = {}


def module_converter(*names):
    """Decorator: registers ``fn(importer, node, module)`` for the layer classes ``names``."""

    def register(fn):
        for name in names:
            MODULE_CONVERTERS[name] = fn
        return fn

    return register


def param(imp, module, node, attr):
    """The tensor ``module.<attr>`` (a parameter or buffer) as a Relax value, or None."""
    value = getattr(module, attr, None)
    if value is None:
        return None
    return imp.tensor(value, f"{node.target}.{attr}")


def _input(imp, node):
    return imp.value(node.args[0] if node.args else node.kwargs["input"])


@module_converter("Linear")
def _linear(imp, node, module):
    return linear(imp, _input(imp, node), param(imp, module, node, "weight"),
                  param(imp, module, node, "bias"))


def _activation(relax_fn):
    def convert(imp, node, module):
        return imp.emit(relax_fn(_input(imp, node)))

    return convert


for _name, _fn in [("ReLU", activation.relu), ("SiLU", activation.silu),
                   ("Sigmoid", unary.sigmoid), ("Tanh", unary.tanh)]:
    module_converter(_name)(_activation(_fn))


@module_converter("GELU")
def _gelu(imp, node, module):
    fn = activation.gelu_tanh if module.approximate == "tanh" else activation.gelu
    return imp.emit(fn(_input(imp, node)))


@module_converter("Softmax", "LogSoftmax")
def _softmax(imp, node, module):
    if module.dim is None:
        raise ValueError(f"{type(module).__name__} needs 'dim'")
    fn = activation.log_softmax if type(module).__name__ == "LogSoftmax" else activation.softmax
    return imp.emit(fn(_input(imp, node), axis=module.dim))


@module_converter("Dropout", "Identity")
def _identity(imp, node, module):
    return _input(imp, node)  # inference: dropout keeps every value


@module_converter("Flatten")
def _flatten(imp, node, module):
    return flatten(imp, _input(imp, node), module.start_dim, module.end_dim)
