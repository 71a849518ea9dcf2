"""from_fx: a ``torch.fx.GraphModule`` to an IRModule with a Relax function ``main``.

>>> import torch                                             # doctest: +SKIP
>>> from rvm.relax.frontend.torch import from_fx             # doctest: +SKIP
>>> model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU())  # doctest: +SKIP
>>> mod = from_fx(torch.fx.symbolic_trace(model), [(("n", 784), "float32")])  # doctest: +SKIP

Placeholders become the parameters of ``main`` (``inp_0``, ``inp_1``...) with the
shapes and dtypes of ``input_info``; a dimension given as a name (or a
``tir.Var``) is symbolic. ``call_module`` nodes of the torch.nn layers in
``MODULE_CONVERTERS``, and ``call_function`` / ``call_method`` nodes of the
operators in ``converters.CONVERTERS`` are translated; parameters and
buffers become constants, or (``keep_params_as_input``) trailing parameters
of ``main``, sorted by name, whose arrays ``relax.frontend.detach_params``
returns.
"""
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.frontend.torch import (  # noqa: F401  (register)
    converters_core, converters_create, converters_nn, converters_shape,
)
from rvm.relax.frontend.torch.converters import CONVERTERS
from rvm.relax.frontend.torch.importer import GraphImporter, GraphImportError, torch_dtype
from rvm.relax.frontend.torch.modules import MODULE_CONVERTERS


def _torch():
    try:
        import torch
        import torch.fx  # noqa: F401
    except ImportError as err:
        raise ImportError("from_fx needs PyTorch; install it with pip install 'rvm[torch]'") \
            from err
    return torch


def _function_overrides(torch):
    """torch functions whose arguments differ from the ATen operator of the same name."""
    functional = torch.nn.functional
    return {functional.batch_norm: "functional_batch_norm",
            functional.embedding: "functional_embedding"}


def _input_vars(imp, input_info):
    inputs = []
    for k, info in enumerate(input_info):
        if not (isinstance(info, (list, tuple)) and len(info) == 2
                and isinstance(info[0], (list, tuple))):
            raise TypeError(f"from_fx: input_info[{k}] must be (shape, dtype), got {info!r}")
        shape, dtype = info
        sinfo = TensorStructInfo(imp.dims(shape), torch_dtype(dtype))
        inputs.append(Var(f"inp_{k}", sinfo))
    return inputs


def from_fx(model, input_info, *, keep_params_as_input=False, unwrap_unit_return_tuple=False,
            no_bind_return_tuple=False, custom_convert_map=None):
    """The Relax module of the traced ``model`` (a ``torch.fx.GraphModule``).

    ``input_info``: one ``(shape, dtype)`` per placeholder, in order.
    ``unwrap_unit_return_tuple``: a model returning a 1-tuple returns its
    element. ``no_bind_return_tuple``: a returned tuple is not bound to a
    variable. ``custom_convert_map``: {name: fn(node, importer)} replacing or
    adding converters. See the module docstring.
    """
    torch = _torch()
    if not isinstance(model, torch.fx.GraphModule):
        raise TypeError(f"from_fx expects a torch.fx.GraphModule (torch.fx.symbolic_trace("
                        f"model)), got {type(model).__name__}")
    imp = GraphImporter("from_fx", torch.fx.Node, keep_params_as_input, CONVERTERS,
                        custom_convert_map)
    inputs = _input_vars(imp, input_info)
    if keep_params_as_input:
        for name, param in sorted(model.named_parameters(), key=lambda item: item[0]):
            imp.tensor(param, name)
    modules = dict(model.named_modules())
    overrides = _function_overrides(torch)
    pending = list(inputs)
    with imp.bb.function("main"):
        with imp.bb.dataflow():
            output = None
            for node in model.graph.nodes:
                if node.op == "placeholder":
                    if not pending:
                        raise GraphImportError(
                            f"from_fx: the graph has more inputs than input_info's "
                            f"{len(inputs)} entries (placeholder '{node.name}')")
                    imp.env[node] = pending.pop(0)
                elif node.op == "get_attr":
                    imp.env[node] = _get_attr(imp, model, node)
                elif node.op == "call_module":
                    imp.env[node] = _call_module(imp, node, modules[node.target])
                elif node.op == "call_function":
                    name = overrides.get(node.target) or getattr(node.target, "__name__", "")
                    imp.env[node] = imp.convert(node, name, CONVERTERS)
                elif node.op == "call_method":
                    imp.env[node] = imp.convert(node, node.target, CONVERTERS)
                elif node.op == "output":
                    output = imp.output(imp.value(node.args[0]), unwrap_unit_return_tuple,
                                        no_bind_return_tuple)
            if pending:
                raise GraphImportError(f"from_fx: input_info has {len(inputs)} entries but the "
                                       f"graph only {len(inputs) - len(pending)} inputs")
        imp.finish(inputs, output)
    return imp.module(inputs)


def _get_attr(imp, model, node):
    value = model
    for part in node.target.split("."):
        if not hasattr(value, part):
            raise GraphImportError(f"from_fx: node '{node.name}' reads '{node.target}', which "
                                   "the module does not have")
        value = getattr(value, part)
    if hasattr(value, "detach") and hasattr(value, "shape"):
        return imp.tensor(value, node.target)
    return value


def _call_module(imp, node, module):
    name = type(module).__name__
    if name in imp.custom:
        return imp.custom[name](node, imp)
    fn = MODULE_CONVERTERS.get(name)
    if fn is None:
        raise GraphImportError(
            f"from_fx: node '{node.name}' (call_module {node.target}: {name}) is not "
            f"supported; supported modules: {', '.join(sorted(MODULE_CONVERTERS))}")
    try:
        return fn(imp, node, module)
    except GraphImportError:
        raise
    except (TypeError, ValueError, IndexError, KeyError) as err:
        raise GraphImportError(f"from_fx: node '{node.name}' (call_module {node.target}: "
                               f"{name}): {err}") from err
