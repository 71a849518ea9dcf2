"""The ONNX importer: ``from_onnx`` walks a graph's nodes in order and emits Relax.

Every ONNX value name maps to a value: a Relax tensor expression, a numpy
array (an initializer, a ``Constant``, or the result of a shape computation
folded at import), or None (an omitted optional input). A numpy array of
dtype ``object`` holds dimensions that are ``tir`` expressions: ``Shape`` of a
tensor with a symbolic dimension gives one, and the shape arithmetic that
follows (Gather, Concat, Unsqueeze, Mul ...) keeps them symbolic until a
``Reshape``, ``Expand`` or ``ConstantOfShape`` consumes them, or an operator takes
them as a tensor (computed at run time by ``vm.builtin.shape_to_tensor``). Sequences
and optionals are ``values.Sequence`` and ``values.Optional``, tensors of strings
``strings.StringTensor``. A node whose inputs
are all numpy arrays folds when its operator has a rule in ``fold.FOLDS``;
otherwise its converter (``converters.CONVERTERS``, by op type) emits Relax
operators through the BlockBuilder. onnx itself is imported when an import
runs.
"""
import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Tuple, Var, const
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo
from rvm.runtime.data_type import DataType
from rvm.runtime.ndarray import array
from rvm.tir.expr import Var as TirVar

#: ONNX TensorProto element types -> rvm dtype names (the types rvm computes with; the
#: narrow ones from bfloat16 on need the ml_dtypes package, as onnx itself does).
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e4m3fnuz",
               19: "float8_e5m2", 20: "float8_e5m2fnuz", 21: "uint4", 22: "int4",
               23: "float4_e2m1fn", 24: "float8_e8m0fnu", 25: "uint2", 26: "int2"}
#: The default-domain opset assumed when a model names none.
DEFAULT_OPSET = 13


class OnnxImportError(ValueError):
    """A model the importer cannot translate; the message names the node."""


class ConstantRequired(OnnxImportError):
    """An operand that decides an output's shape is a graph input, known only at run time;
    ``input_name`` names that input (binding it, e.g. as an initializer, imports the model)."""

    def __init__(self, message, input_name):
        super().__init__(message)
        self.input_name = input_name


def onnx_dtype(elem_type, what):
    """The rvm dtype of an ONNX element type (OnnxImportError naming ``what`` otherwise)."""
    if elem_type not in ONNX_DTYPES:
        import onnx  # the model came through onnx, so it is installed

        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in \
            onnx.TensorProto.DataType.values() else str(elem_type)
        raise OnnxImportError(f"{what}: element type {name} is not supported; expected one of "
                              f"{sorted(set(ONNX_DTYPES.values()))}")
    return ONNX_DTYPES[elem_type]


def is_float(dtype):
    """Whether the rvm dtype name ``dtype`` is a float type (bfloat16 and float8 too)."""
    return DataType(dtype).is_float


def lowest(dtype):
    """The lowest finite value of the rvm dtype ``dtype``."""
    np_dtype = DataType(dtype).numpy_dtype
    if DataType(dtype).is_float:
        if np_dtype.kind == "f" and np_dtype.name in ("float16", "float32", "float64"):
            return float(np.finfo(np_dtype).min)
        import ml_dtypes  # a narrow float's dtype came from it

        return float(ml_dtypes.finfo(np_dtype).min)
    return int(np.iinfo(np_dtype).min)


def dims_of(shape):
    """A shape's dimensions as ints where they are constant, ``tir`` expressions otherwise."""
    out = []
    for d in shape:
        value = getattr(d, "value", None)
        out.append(int(value) if isinstance(d, PrimExpr) and isinstance(value, int) else d)
    return out


class Context:
    """The state of one import, and what converters use: the builder, values and helpers."""

    def __init__(self, opset, keep_params):
        self.opset = opset
        self.keep_params = keep_params
        self.bb = BlockBuilder()
        self.env = {}
        self.param_vars = []
        self.param_arrays = []
        self._sym_vars = {}
        self.node = None
        self.graph_inputs = set()
        self.root = self  # the import's top context, whose builder holds the module
        self._function_count = [0]

    def child(self):
        """A context for one function of a subgraph (Loop, If): its own builder and values,
        the import's symbolic dimensions, functions added to the root's module."""
        sub = Context(self.opset, self.keep_params)
        sub.bb = BlockBuilder(check_global_vars=False)
        sub._sym_vars = self._sym_vars
        sub.root = self.root
        sub._function_count = self._function_count
        sub.env[""] = None
        return sub

    def function_name(self, hint):
        """A new function name of this import (``hint`` and a number)."""
        self._function_count[0] += 1
        return f"{hint}{self._function_count[0] - 1}"

    def convert_nodes(self, nodes):
        """Converts ``nodes`` in order, binding their outputs in ``env``."""
        from rvm.frontend.onnx.converters import CONVERTERS, convert_node

        for node in nodes:
            self.node = node
            outputs = convert_node(self, node, _attributes(node), CONVERTERS)
            for name, value in zip(node.output, outputs):
                if name:
                    self.env[name] = value

    # -- values -----------------------------------------------------------------------------
    def emit(self, expr, name_hint=""):
        """Binds ``expr`` in the dataflow block; returns the variable."""
        return self.bb.emit(expr, name_hint=name_hint)

    def symbolic_dim(self, name):
        """The ``tir`` variable of the symbolic dimension ``name`` (one per name)."""
        if name not in self._sym_vars:
            self._sym_vars[name] = TirVar(name, "int64")
        return self._sym_vars[name]

    def tensor(self, value, dtype=None):
        """``value`` as a Relax tensor expression: numpy arrays become constants (converted
        to ``dtype`` when given)."""
        if isinstance(value, RelaxExpr):
            return value
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                if value.ndim <= 1 and not _all_static(value):
                    return self._shape_tensor(value, dtype)
                value = static_array(value, "a shape computation")
            if dtype is not None:
                value = value.astype(DataType(dtype).numpy_dtype)
            return const(value)
        raise OnnxImportError(f"expected a tensor of numbers, got {value!r}")

    def _shape_tensor(self, dims, dtype):
        """A shape computation with symbolic dimensions (at most 1-d) as a tensor computed
        at run time from the shape (``vm.builtin.shape_to_tensor``)."""
        from rvm.relax.op import base, manipulate, unary
        from rvm.relax.expr import ShapeExpr

        flat = ShapeExpr([d if isinstance(d, PrimExpr) else int(d) for d in dims.reshape(-1)])
        out = self.emit(base.call_pure_packed("vm.builtin.shape_to_tensor", flat,
                                              sinfo_args=TensorStructInfo((dims.size,),
                                                                          "int64")))
        if dims.ndim == 0:
            out = self.emit(manipulate.reshape(out, ()))
        if dtype is not None and dtype != "int64":
            out = self.emit(unary.astype(out, dtype))
        return out

    def expr(self, value):
        """Any value as a Relax expression: tensors as ``tensor`` gives them, sequences
        and optionals as ``values.relax_expr`` does."""
        from rvm.frontend.onnx.values import relax_expr

        return relax_expr(self, value)

    def constant(self, value, what):
        """``value`` as a numpy array; OnnxImportError when it is only known at run time."""
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, Var) and value.name_hint in self.graph_inputs:
            raise ConstantRequired(f"{what} must be known at import, but it is the graph input "
                                   f"'{value.name_hint}'; make it an initializer",
                                   value.name_hint)
        raise OnnxImportError(f"{what} must be a constant (an initializer or computed from "
                              "constants and shapes), got a value computed at run time")

    def sinfo(self, value):
        """The TensorStructInfo of a tensor expression."""
        sinfo = getattr(value, "struct_info_", None)
        if not isinstance(sinfo, TensorStructInfo):
            raise OnnxImportError(f"expected a tensor, got {type(sinfo).__name__}")
        return sinfo

    def shape(self, value):
        """The dimensions of a value (ints, ``tir`` expressions)."""
        if isinstance(value, np.ndarray):
            return list(value.shape)
        values = self.sinfo(value).shape_values
        if values is None:
            raise OnnxImportError("the shape of an input is unknown")
        return dims_of(values)

    def ndim(self, value):
        """The rank of a value."""
        return len(self.shape(value))

    def dtype(self, value):
        """The rvm dtype name of a value."""
        if isinstance(value, np.ndarray):
            return "int64" if value.dtype == object else str(value.dtype)
        return str(self.sinfo(value).dtype)


def _all_static(values):
    return all(isinstance(getattr(v, "value", v), (int, np.integer))
               for v in values.reshape(-1))


def static_array(values, what):
    """An object array of dimensions as int64, when every dimension is constant."""
    flat = [getattr(v, "value", v) for v in values.reshape(-1)]
    if not all(isinstance(v, (int, np.integer)) for v in flat):
        raise OnnxImportError(f"{what} has symbolic dimensions "
                              f"{[str(v) for v in values.reshape(-1)]}; it cannot be used as a "
                              "tensor")
    return np.array(flat, "int64").reshape(values.shape)


def _attributes(node):
    from onnx import helper

    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, list):
            value = [v.decode() if isinstance(v, bytes) else v for v in value]
        out[attr.name] = value
    return out


def tensor_value(proto):
    """A TensorProto as a numpy array (its rvm dtype); a tensor of strings as a
    ``strings.StringTensor``."""
    from onnx import numpy_helper

    from rvm.frontend.onnx.strings import STRING, string_value

    if proto.data_type == STRING:
        return string_value(proto)
    onnx_dtype(proto.data_type, f"tensor '{proto.name}'")
    return numpy_helper.to_array(proto).copy()


def _input_sinfo(ctx, value_info, shape_dict, dtype_dict):
    name = value_info.name
    tensor_type = value_info.type.tensor_type
    dtype = dtype_dict.get(name) if isinstance(dtype_dict, dict) else dtype_dict
    if dtype is None:
        dtype = onnx_dtype(tensor_type.elem_type, f"graph input '{name}'")
    if name in shape_dict:
        shape = [ctx.symbolic_dim(d) if isinstance(d, str) else int(d)
                 for d in shape_dict[name]]
    elif tensor_type.HasField("shape"):
        shape = []
        for k, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                shape.append(int(dim.dim_value))
            else:
                shape.append(ctx.symbolic_dim(dim.dim_param or f"{name}_dim{k}"))
    else:
        raise OnnxImportError(f"graph input '{name}' has no shape; give it in shape_dict")
    return TensorStructInfo(shape, dtype)


def _opset_of(model, opset):
    if opset is not None:
        return int(opset)
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return DEFAULT_OPSET


def from_onnx(model, shape_dict=None, dtype_dict=None, opset=None,
              keep_params_in_input=False):
    """The Relax module of the ONNX ``model`` (a ModelProto): ``main`` takes the graph
    inputs (initializers are not inputs) and returns the graph output (a tuple when there
    are several).

    The converters follow the operator forms of opsets 13 and later (an operator whose
    older form differs, such as Reduce axes moving from an attribute to an input, is
    converted by the model's opset); an operator no converter handles raises
    OnnxImportError naming the node, its op type and opset, and the supported op types.

    ``shape_dict`` overrides input shapes by name (a string dimension is symbolic);
    ``dtype_dict`` overrides input dtypes (a dict by name, or one dtype for all);
    ``opset`` overrides the model's default-domain opset; ``keep_params_in_input`` makes
    the initializers trailing parameters of ``main`` (their arrays in its ``params``
    attribute, for ``relax.frontend.detach_params``) instead of constants.
    """
    try:
        import onnx
    except ImportError as err:  # pragma: no cover - exercised without onnx only
        raise ImportError("from_onnx needs the onnx package: pip install onnx "
                          "(or rvm[onnx])") from err
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"from_onnx expects an onnx.ModelProto, got {type(model).__name__}")
    ctx = Context(_opset_of(model, opset), keep_params_in_input)
    graph = model.graph
    for proto in graph.initializer:
        values = tensor_value(proto)
        if keep_params_in_input and isinstance(values, np.ndarray):
            var = Var(proto.name, TensorStructInfo(values.shape, str(values.dtype)))
            ctx.param_vars.append(var)
            ctx.param_arrays.append(array(values))
            ctx.env[proto.name] = var
        else:
            ctx.env[proto.name] = values
    initializers = {p.name for p in graph.initializer}
    inputs = []
    for value_info in graph.input:
        if value_info.name in initializers:
            continue
        from rvm.frontend.onnx.strings import STRING, string_input

        if value_info.type.tensor_type.elem_type == STRING:
            var = Var(value_info.name, ObjectStructInfo())
            ctx.env[value_info.name] = string_input(ctx, value_info.type.tensor_type, var)
        elif value_info.type.HasField("tensor_type"):
            var = Var(value_info.name, _input_sinfo(ctx, value_info, dict(shape_dict or {}),
                                                     dtype_dict))
            ctx.env[value_info.name] = var
        else:  # a sequence or optional: its length or presence is known at run time
            from rvm.frontend.onnx.values import from_expr, type_desc

            var = Var(value_info.name, ObjectStructInfo())
            ctx.env[value_info.name] = from_expr(
                ctx, type_desc(value_info.type, f"graph input '{value_info.name}'"), var)
        inputs.append(var)
        ctx.graph_inputs.add(value_info.name)
    ctx.env[""] = None
    with ctx.bb.function("main", params=inputs + ctx.param_vars):
        with ctx.bb.dataflow():
            ctx.convert_nodes(graph.node)
            results = []
            for out in graph.output:
                if out.name not in ctx.env:
                    raise OnnxImportError(f"graph output '{out.name}' is never computed")
                results.append(ctx.expr(ctx.env[out.name]))
            result = results[0] if len(results) == 1 else Tuple(results)
            output = ctx.bb.emit_output(result)
        ctx.bb.emit_func_output(output)
    mod = ctx.bb.get()
    if keep_params_in_input:
        mod["main"] = mod["main"].with_attr({"num_input": len(inputs),
                                              "params": list(ctx.param_arrays)})
    return mod
