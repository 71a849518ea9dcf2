"""from_exported_program: a ``torch.export.ExportedProgram`` to an IRModule with ``main``.

>>> import torch                                                     # doctest: +SKIP
>>> from rvm.relax.frontend.torch import from_exported_program       # doctest: +SKIP
>>> model = torch.nn.Linear(784, 10)                                  # doctest: +SKIP
>>> batch = torch.export.Dim("batch")                                 # doctest: +SKIP
>>> ep = torch.export.export(model, (torch.randn(2, 784),),           # doctest: +SKIP
...                          dynamic_shapes={"input": {0: batch}})
>>> mod = from_exported_program(ep)                                   # doctest: +SKIP

The program's user inputs become the parameters of ``main``, with the
shapes and dtypes torch.export recorded (a dynamic dimension is a symbolic
one, named after torch's symbol, ``s0``...); parameters, buffers and
constant tensors become constants, or (``keep_params_as_input``) trailing
parameters of ``main`` in the program's order. ATen operators are translated
by the converters of ``converters.CONVERTERS``, looked up by the operator's
name (``aten.linear.default`` -> ``linear``); symbolic sizes
(``aten.sym_size.int`` and the arithmetic on them) become ``tir``
expressions. As the program returns a tuple, so does ``main``, unless
``unwrap_unit_return_tuple`` unwraps a single result. A program holding
``torch.vmap`` regions is decomposed (``run_decompositions()``) first.
"""
from rvm.ir.expr import RelaxExpr
from rvm.relax.expr import PrimValue, Var
from rvm.relax.op.debug import assert_op
from rvm.tir.expr import IntImm, Var as TirVar
from rvm.tir.arith import simplify
from rvm.tir.op import floordiv
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.frontend.torch import (  # noqa: F401  (register)
    converters_core, converters_create, converters_nn, converters_shape,
)
from rvm.relax.frontend.torch.converters import CONVERTERS
from rvm.relax.frontend.torch.importer import GraphImporter, GraphImportError, torch_dtype


def _torch():
    try:
        import torch
        import torch.export  # noqa: F401
    except ImportError as err:
        raise ImportError("from_exported_program needs PyTorch; install it with "
                          "pip install 'rvm[torch]'") from err
    return torch


def operator_name(target):
    """The converter name of a node target: an ATen operator's name without its namespace
    and overload (``aten.add.Tensor`` -> ``add``), else the function's name."""
    name = getattr(target, "_opname", None)
    if name is not None:
        return name
    return getattr(target, "__name__", str(target))


def _dim(imp, d, node_name):
    if isinstance(d, int):
        return d
    expr = getattr(getattr(d, "node", None), "expr", None)
    if expr is not None and getattr(expr, "is_Symbol", False):
        return imp.symbolic_dim(str(expr))
    if expr is not None and getattr(expr, "is_Integer", False):
        return int(expr)
    raise GraphImportError(f"from_exported_program: input '{node_name}' has the dimension "
                           f"{d}; expected an int or a plain symbolic size")


def _input_var(imp, node):
    val = node.meta.get("val")
    if val is None or not hasattr(val, "shape"):
        raise GraphImportError(f"from_exported_program: input '{node.name}' is not a tensor "
                               f"(its example value is {type(val).__name__})")
    shape = [_dim(imp, d, node.name) for d in val.shape]
    return Var(node.name, TensorStructInfo(shape, torch_dtype(val.dtype)))


def _lifted_tensor(program, spec):
    target = spec.target
    if target in program.state_dict:
        return program.state_dict[target]
    if target in program.constants:
        return program.constants[target]
    raise GraphImportError(f"from_exported_program: the program has no tensor named "
                           f"'{target}' for input '{spec.arg.name}'")


def from_exported_program(exported_program, *, keep_params_as_input=False,
                          unwrap_unit_return_tuple=False, no_bind_return_tuple=False,
                          custom_convert_map=None):
    """The Relax module of ``exported_program`` (from ``torch.export.export``).

    The keyword arguments are those of ``from_fx``; see the module docstring.
    """
    torch = _torch()
    if not isinstance(exported_program, torch.export.ExportedProgram):
        raise TypeError(f"from_exported_program expects a torch.export.ExportedProgram "
                        f"(torch.export.export(model, args)), got "
                        f"{type(exported_program).__name__}")
    if _has_vmap(exported_program):
        # torch.vmap regions (transformers >= 4.53 builds its attention masks with them) stay
        # as functorch calls before dispatch; decomposing traces them into plain ATen
        try:
            exported_program = exported_program.run_decompositions()
        except Exception as err:  # torch's own tracing; its error types vary
            raise GraphImportError(
                f"from_exported_program: the program holds torch.vmap regions, which are "
                f"imported after run_decompositions(), and torch failed to decompose it: "
                f"{type(err).__name__}: {str(err).splitlines()[0]}") from err
    imp = GraphImporter("from_exported_program", torch.fx.Node, keep_params_as_input,
                        CONVERTERS, custom_convert_map)
    specs = {s.arg.name: s for s in exported_program.graph_signature.input_specs
             if hasattr(s.arg, "name")}
    user_input = torch.export.graph_signature.InputKind.USER_INPUT
    for symbol, bounds in exported_program.range_constraints.items():
        upper = getattr(bounds, "upper", None)
        if getattr(symbol, "is_Symbol", False) and getattr(upper, "is_Integer", False):
            imp.dim_upper[str(symbol)] = int(upper)
    graph = exported_program.graph_module.graph
    user = {node: _input_var(imp, node) for node in graph.nodes if node.op == "placeholder"
            and (specs.get(node.name) is None or specs[node.name].kind == user_input)}
    inputs = list(user.values())

    def placeholder(node):
        if node in user:
            return user[node]
        return imp.tensor(_lifted_tensor(exported_program, specs[node.name]), node.name)

    with imp.bb.function("main"):
        _check_upper_bounds(imp, inputs)
        with imp.bb.dataflow():
            value = _run_graph(imp, exported_program.graph_module, placeholder)
            output = imp.output(value, unwrap_unit_return_tuple, no_bind_return_tuple)
        imp.finish(inputs, output)
    return imp.module(inputs)


def _has_vmap(program):
    """Whether the program holds torch.vmap's pre-dispatch calls (``_add_batch_dim``...)."""
    return any(node.op == "call_function" and (
        str(getattr(node.target, "__module__", "")).startswith("torch._functorch")
        or operator_name(node.target) == "flat_apply") for node in program.graph.nodes)


def _check_upper_bounds(imp, inputs):
    """Emits, at the entry of ``main``, a check of each symbolic input dimension against the
    largest value torch.export allowed for it (``Dim(max=...)``, a position table's length),
    so a longer input is refused by name instead of failing inside a kernel."""
    for var in inputs:
        for axis, dim in enumerate(var.struct_info_.shape_values):
            upper = imp.dim_upper.get(getattr(dim, "name", None))
            if not isinstance(dim, TirVar) or upper is None:
                continue
            imp.bb.emit(assert_op(PrimValue(dim <= upper), [PrimValue(dim)],
                                  format=f"main: input '{var.name_hint}' has {{}} at axis "
                                         f"{axis} ({dim.name}); the exported program allows "
                                         f"at most {upper}"))


def _run_graph(imp, graph_module, placeholder):
    """Converts the nodes of ``graph_module`` in order; ``placeholder(node)`` gives the value
    of an input. Returns the value of the output node."""
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            imp.env[node] = placeholder(node)
        elif node.op == "get_attr":
            imp.env[node] = _attribute(imp, graph_module, node)
        elif node.op == "call_function" and operator_name(node.target) in _REGIONS:
            imp.env[node] = _inline_region(imp, node)
        elif node.op == "call_function":
            value = imp.convert(node, operator_name(node.target), CONVERTERS)
            imp.env[node] = _settle_shape(imp, node, value)
        elif node.op == "output":
            return imp.value(node.args[0])
        else:
            raise GraphImportError(f"from_exported_program: node '{node.name}' has "
                                   f"the kind '{node.op}'; expected placeholder, "
                                   "get_attr, call_function or output")
    raise GraphImportError("from_exported_program: the graph has no output node")


def _torch_dim(imp, d):
    """A dimension torch recorded as an int or a ``tir`` expression: an integer, a symbol,
    or sums, products and floor divisions of them (``4*s0``); None for other forms."""
    if isinstance(d, int):
        return d
    expr = getattr(getattr(d, "node", None), "expr", d)
    return _sympy_to_tir(imp, expr)


def _sympy_to_tir(imp, expr):
    if getattr(expr, "is_Integer", False):
        return int(expr)
    if getattr(expr, "is_Symbol", False):
        return imp.symbolic_dim(str(expr))
    parts = [_sympy_to_tir(imp, a) for a in getattr(expr, "args", ())]
    if not parts or any(p is None for p in parts):
        return None
    kind = type(expr).__name__
    if kind in ("Add", "Mul"):
        out = parts[0]
        for p in parts[1:]:
            out = out + p if kind == "Add" else out * p
        return out
    if kind == "FloorDiv" and len(parts) == 2:
        return floordiv(parts[0], parts[1])
    return None


def _settle_shape(imp, node, value):
    """``value`` with the shape torch recorded for ``node`` when Relax's inference ends with
    a compound dimension (``max(min(1, s) + s - 1, 0)`` of a clamped slice,
    ``s * 128 // (s * 4)`` of a reshape to -1) or none where torch proved a simpler one
    (``s``, ``32``, ``4*s``): a checked match_cast, so later operators see the same
    symbolic dimensions torch does."""
    sinfo = getattr(value, "struct_info_", None)
    if not isinstance(value, RelaxExpr) or not isinstance(sinfo, TensorStructInfo):
        return value
    dims = sinfo.shape_values
    if dims is not None and all(isinstance(d, (IntImm, TirVar)) for d in dims):
        return value
    shape = getattr(node.meta.get("val"), "shape", None)
    if shape is None or (sinfo.ndim >= 0 and len(shape) != sinfo.ndim):
        return value
    torch_dims = [_torch_dim(imp, d) for d in shape]
    if any(d is None for d in torch_dims):
        return value
    if dims is not None and all(_same_dim(a, b) for a, b in zip(dims, torch_dims)):
        return value
    return imp.bb.match_cast(value, TensorStructInfo(torch_dims, sinfo.dtype),
                             name_hint=node.name)


def _same_dim(ours, theirs):
    """Whether the two dimensions are provably equal."""
    return getattr(simplify(ours - theirs), "value", None) == 0


def _attribute(imp, graph_module, node):
    value = graph_module
    for part in str(node.target).split("."):
        value = getattr(value, part, None)
    if hasattr(value, "graph") or hasattr(value, "detach"):
        return value if hasattr(value, "graph") else imp.tensor(value, node.name)
    raise GraphImportError(f"from_exported_program: node '{node.name}' reads the attribute "
                           f"'{node.target}', a {type(value).__name__}; expected a submodule "
                           "or a tensor")


# higher-order nodes that run a submodule under a mode inference does not need
# (gradients on/off, autocast): (the argument index of the submodule, of its first input)
_REGIONS = {"wrap_with_set_grad_enabled": (1, 2), "wrap_with_autocast": (4, 5)}


def _inline_region(imp, node):
    """The value of a region node: its submodule's graph converted in place, with the
    node's remaining arguments as the submodule's inputs."""
    at, first = _REGIONS[operator_name(node.target)]
    submodule = imp.value(node.args[at]) if len(node.args) > at else None
    if not hasattr(submodule, "graph"):
        raise GraphImportError(f"from_exported_program: node '{node.name}' "
                               f"({operator_name(node.target)}) has no submodule argument")
    values = iter([imp.value(a) for a in node.args[first:]])
    return _run_graph(imp, submodule, lambda inner: next(values))
