"""What the two PyTorch importers share: the graph walk, values, parameters and errors.

Both ``from_fx`` and ``from_exported_program`` walk a ``torch.fx.Graph`` in
order and keep, for every node, the value it stands for: a Relax expression
(a tensor variable, a tuple), or a plain Python value (an int, a symbolic
dimension as a ``tir`` expression, a list of them, None). An operator node is
translated by a converter from ``converters.CONVERTERS`` (by name), which
emits Relax operators through the BlockBuilder; the importers differ only in
how inputs and parameters enter the graph and in how their node targets map
to converter names. torch is imported by the callers, never here at import.
"""
import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Tuple, Var, const
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.ndarray import array
from rvm.tir.expr import Var as TirVar

_TORCH_DTYPES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64",
    "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "int8": "int8",
    "uint8": "uint8", "bool": "bool",
}


def torch_dtype(dtype):
    """The rvm dtype name of a torch dtype (``torch.float32``) or a dtype string."""
    name = str(dtype).replace("torch.", "")
    if name not in _TORCH_DTYPES:
        raise ValueError(f"unsupported torch dtype {dtype!r}; expected one of "
                         f"{sorted(set(_TORCH_DTYPES.values()))}")
    return _TORCH_DTYPES[name]


class GraphImportError(ValueError):
    """A graph the importer cannot translate; the message names the node."""


class GraphImporter:
    """The state of one import: the builder, the node values and the parameters.

    ``node_type`` is ``torch.fx.Node``. ``keep_params_as_input``: parameters become
    trailing parameters of ``main`` (their arrays go to the function attribute
    ``params``) instead of constants. ``who`` names the importer in error messages.
    """

    def __init__(self, who, node_type, keep_params_as_input, converters,
                 custom_convert_map=None):
        self.who = who
        self.node_type = node_type
        self.keep_params = keep_params_as_input
        self.bb = BlockBuilder()
        self.env = {}
        self.converters = dict(converters)
        self.custom = dict(custom_convert_map or {})
        self.param_vars = []
        self.param_arrays = []
        self._param_of = {}
        self._sym_vars = {}
        self.dim_upper = {}  # symbolic dimension name -> the largest value the program allows

    # -- values ---------------------------------------------------------------------------
    def emit(self, expr, name_hint=""):
        """Binds ``expr`` in the current dataflow block; returns the variable."""
        return self.bb.emit(expr, name_hint=name_hint)

    def value(self, arg):
        """The value of a node argument: nodes become their values, containers recursively."""
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        if isinstance(arg, dict):
            return {k: self.value(v) for k, v in arg.items()}
        if isinstance(arg, self.node_type):
            if arg not in self.env:
                raise GraphImportError(f"{self.who}: node '{arg.name}' is used before it is "
                                       "defined")
            return self.env[arg]
        return arg

    def symbolic_dim(self, name):
        """The ``tir`` variable of the symbolic dimension ``name`` (one per name)."""
        if name not in self._sym_vars:
            self._sym_vars[name] = TirVar(name, "int64")
        return self._sym_vars[name]

    def within(self, value, extent):
        """Whether ``value`` (an int or a symbolic dimension) is known to be at most
        ``extent`` (an int): by value, or by the bound the program recorded for the symbol."""
        if isinstance(value, (int, np.integer)):
            return int(value) <= extent
        upper = self.dim_upper.get(getattr(value, "name", None))
        return isinstance(value, TirVar) and upper is not None and upper <= extent

    def dims(self, shape):
        """A shape as dimensions: ints and ``tir`` expressions; strings are symbolic names."""
        out = []
        for d in shape:
            if isinstance(d, str):
                out.append(self.symbolic_dim(d))
            elif isinstance(d, (int, np.integer)):
                out.append(int(d))
            elif isinstance(d, PrimExpr):
                out.append(d)
            else:
                raise GraphImportError(f"{self.who}: a dimension must be an int, a name or a "
                                   f"tir expression, got {type(d).__name__} {d!r}")
        return out

    def tensor(self, data, name):
        """A torch tensor (a parameter, a buffer) as a constant, or as a parameter variable of
        ``main`` when parameters are kept as inputs (one per tensor)."""
        key = id(data)
        if key in self._param_of:
            return self._param_of[key]
        try:
            torch_dtype(data.dtype)
        except ValueError as err:
            raise GraphImportError(f"{self.who}: the tensor '{name}' of the graph: {err}") \
                from err
        values = data.detach().cpu().numpy()
        if self.keep_params:
            var = Var(name.replace(".", "_"), TensorStructInfo(values.shape,
                                                                str(values.dtype)))
            self.param_vars.append(var)
            self.param_arrays.append(array(values))
            result = var
        else:
            result = const(values)
        self._param_of[key] = result
        return result

    # -- converting nodes -----------------------------------------------------------------
    def convert(self, node, name, supported):
        """The value of the operator node ``node`` through the converter ``name``."""
        if name in self.custom:
            return self.custom[name](node, self)
        fn = self.converters.get(name)
        where = _module_path(node)
        if fn is None:
            raise GraphImportError(
                f"{self.who}: node '{node.name}' ({node.op} {_target_text(node.target)}){where} "
                f"is not supported ({len(supported)} {node.op} targets are; README lists them "
                "under 'PyTorch operators')")
        try:
            return fn(self, node)
        except GraphImportError:
            raise
        except (TypeError, ValueError, IndexError, KeyError) as err:
            raise GraphImportError(f"{self.who}: node '{node.name}' ({node.op} "
                                   f"{_target_text(node.target)}){where}: {err}") from err

    def output(self, value, unwrap_unit_return_tuple, no_bind_return_tuple):
        """Emits the graph output ``value`` (a tensor, or a tuple/list of them)."""
        if isinstance(value, (list, tuple)):
            if unwrap_unit_return_tuple and len(value) == 1:
                return self.bb.emit_output(self._relax(value[0]))
            if no_bind_return_tuple:
                return [self.bb.emit_output(self._relax(v)) for v in value]
            return self.bb.emit_output(Tuple([self._relax(v) for v in value]))
        return self.bb.emit_output(self._relax(value))

    def _relax(self, value):
        if isinstance(value, RelaxExpr):
            return value
        if isinstance(value, (list, tuple)):
            return Tuple([self._relax(v) for v in value])
        raise GraphImportError(f"{self.who}: the graph returns a {type(value).__name__}; expected "
                           "tensors or tuples of tensors")

    def finish(self, inputs, output):
        """Ends ``main`` (call it inside the function scope, after the dataflow block)."""
        self.bb.emit_func_output(output, params=list(inputs) + self.param_vars)

    def module(self, inputs):
        """The module built, ``main`` carrying ``num_input`` and ``params`` when parameters
        are kept as inputs (``relax.frontend.detach_params`` takes them off)."""
        mod = self.bb.get()
        if self.keep_params:
            mod["main"] = mod["main"].with_attr({"num_input": len(inputs),
                                                  "params": list(self.param_arrays)})
        return mod


def _module_path(node):
    """`` in module 'encoder.layer.0.attention' (BertSelfAttention)``: the innermost
    ``nn.Module`` the node was traced in, from torch's record of the module stack."""
    stack = getattr(node, "meta", {}).get("nn_module_stack") or {}
    if not stack:
        return ""
    path, kind = list(stack.values())[-1][:2]
    kind = getattr(kind, "__name__", str(kind)).rsplit(".", 1)[-1].strip("'>")
    path = str(path).replace("L['self'].", "").replace("L__self___", "")
    return f" in module '{path}' ({kind})" if path else f" in the top module ({kind})"


def _target_text(target):
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", None)
    if isinstance(target, str):
        return repr(target)
    if name and module and not module.startswith("torch._ops"):
        return f"{module}.{name}"
    return str(target)
