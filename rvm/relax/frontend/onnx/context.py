"""The state of one ONNX import: the BlockBuilder, the value of every ONNX name, and the
helpers converters use to turn values into Relax.

Every ONNX value name maps to a value: a Relax tensor expression, a numpy array (an
initializer, a ``Constant``, or the result of a shape computation folded at import; see
``common``), or None (an omitted optional input). Sequences and optionals are
``values.Sequence`` and ``values.Optional``, tensors of strings ``strings.StringTensor``.
A node whose inputs are all small integer arrays (``registry.is_shape_value``) folds when
its operator has a rule in ``registry.FOLDS``; otherwise its converter emits Relax
operators through the builder.
"""
import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import ShapeExpr, Var, const
from rvm.relax.frontend.onnx.common import (
    ConstantRequired, OnnxImportError, all_static, attributes, dims_of, onnx_dtype, static_array,
)
from rvm.relax.frontend.onnx.registry import convert_node
from rvm.relax.frontend.onnx.values import relax_expr
from rvm.relax.op import base, manipulate, unary
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.data_type import DataType
from rvm.tir.expr import Var as TirVar


class Context:
    """The state of one import, and what converters use: the builder, values and helpers."""

    def __init__(self, opset, keep_params, converters):
        self.opset = opset
        self.domain_opsets = {}  # the model's opset of each other domain
        self.converters = converters  # op type -> converter
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
        sub = Context(self.opset, self.keep_params, self.converters)
        sub.domain_opsets = self.domain_opsets
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
        for node in nodes:
            self.node = node
            outputs = convert_node(self, node, attributes(node), self.converters)
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
                if value.ndim <= 1 and not all_static(value):
                    return self._shape_tensor(value, dtype)
                value = static_array(value, "a shape computation")
            if dtype is not None:
                value = value.astype(DataType(dtype).numpy_dtype)
            return const(value)
        raise OnnxImportError(f"expected a tensor of numbers, got {value!r}")

    def _shape_tensor(self, dims, dtype):
        """A shape computation with symbolic dimensions (at most 1-d) as a tensor computed
        at run time from the shape (``vm.builtin.shape_to_tensor``)."""
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

    def input_sinfo(self, value_info, shape_dict, dtype_dict):
        """The TensorStructInfo of a graph input: its shape and dtype as the model gives them,
        overridden by ``shape_dict``/``dtype_dict``."""
        name = value_info.name
        tensor_type = value_info.type.tensor_type
        dtype = dtype_dict.get(name) if isinstance(dtype_dict, dict) else dtype_dict
        if dtype is None:
            dtype = onnx_dtype(tensor_type.elem_type, f"graph input '{name}'")
        if name in shape_dict:
            shape = [self.symbolic_dim(d) if isinstance(d, str) else int(d)
                     for d in shape_dict[name]]
        elif tensor_type.HasField("shape"):
            shape = []
            for k, dim in enumerate(tensor_type.shape.dim):
                if dim.HasField("dim_value"):
                    shape.append(int(dim.dim_value))
                else:
                    shape.append(self.symbolic_dim(dim.dim_param or f"{name}_dim{k}"))
        else:
            raise OnnxImportError(f"graph input '{name}' has no shape; give it in shape_dict")
        return TensorStructInfo(shape, dtype)
