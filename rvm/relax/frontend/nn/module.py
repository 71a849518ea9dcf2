"""``Module`` and ``ModuleList`` of ``rvm.relax.frontend.nn`` (TVM's ``nn.Module``): models
and layers hold their parameters and submodules as plain attributes, named by dotted paths.

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

from rvm.relax.frontend.nn.core import Parameter
from rvm.relax.frontend.nn.exporter import export


def _children(module):
    """(name, value) of a module's attributes; a ModuleList's items are named 0, 1, ..."""
    if isinstance(module, ModuleList):
        return [(str(i), item) for i, item in enumerate(module.modules)]
    return [(name, item) for name, item in module.__dict__.items() if not name.startswith("_")]


def _attribute_finder(root, prefix, condition_yield, _path=()):
    """(dotted name, value) of every attribute under ``root`` (modules, lists, tuples, dicts
    of them, recursively) for which ``condition_yield`` holds, in attribute order. A module
    that refers back to one of its enclosing modules is not entered again."""
    path = _path + (id(root),)
    for name, item in _children(root):
        yield from _find(item, prefix + name, condition_yield, path)


def _find(item, name, condition_yield, path):
    if condition_yield(item):
        yield name, item
    elif isinstance(item, Module):
        if id(item) not in path:
            yield from _attribute_finder(item, name + ".", condition_yield, path)
    elif isinstance(item, (list, tuple)):
        for i, sub in enumerate(item):
            yield from _find(sub, f"{name}.{i}", condition_yield, path)
    elif isinstance(item, dict):
        for key, sub in item.items():
            yield from _find(sub, f"{name}.{key}", condition_yield, path)


def _modules(root, _path=()):
    """``root`` and every module under it, each once per place it is held."""
    yield root
    path = _path + (id(root),)
    for _, module in _attribute_finder(root, "", lambda x: isinstance(x, Module) and
                                       not isinstance(x, ModuleList), path):
        if id(module) not in path:
            yield from _modules(module, path)


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
        """Converts every parameter (and every submodule's ``dtype`` attribute) to ``dtype``;
        refuses, changing nothing, when a parameter of another dtype is bound to data."""
        if dtype is None:
            return
        params = list(self.named_parameters())
        bound = [name for name, p in params if p.data is not None and p.dtype != dtype]
        if bound:
            raise ValueError(f"Module.to({dtype!r}): parameters {bound} are bound to data; "
                             "converting them would change that data")
        for _, param in params:
            param.to(dtype)
        for module in _modules(self):
            if isinstance(getattr(module, "dtype", None), str):
                module.dtype = dtype

    def export_tvm(self, spec, debug=False):
        """(IRModule, [(name, Parameter)]): one Relax function per method in ``spec``.

        ``spec`` maps a method name to its inputs, ``{"forward": {"x":
        nn.spec.Tensor([1, 4], "float32")}}``; each function takes those
        inputs, then every parameter (named by its dotted path), and has the
        ``num_input`` attribute set to the number of inputs.
        """
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

    def forward(self, x):
        """Applies the modules in order."""
        for module in self.modules:
            x = module(x)
        return x
