"""The ONNX importer's entry: ``from_onnx`` walks a graph's nodes in order and emits Relax
(the values it keeps are described in ``context``; the converters, by op type, in
``converters``). onnx itself is imported when an import runs.
"""
import numpy as np

from rvm.relax.expr import Tuple, Var
from rvm.relax.frontend.onnx.common import OnnxImportError, opset_of
from rvm.relax.frontend.onnx.context import Context
from rvm.relax.frontend.onnx.converters import CONVERTERS
from rvm.relax.frontend.onnx.strings import STRING, string_input
from rvm.relax.frontend.onnx.values import from_expr, tensor_value, type_desc
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo
from rvm.relax.transform.compose_layer_norm import ComposeLayerNorm
from rvm.runtime.ndarray import array


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

    A layer normalization spelled out op by op (exports below opset 17 have no
    LayerNormalization) is imported as ``R.nn.layer_norm`` (ComposeLayerNorm).
    """
    try:
        import onnx
    except ImportError as err:  # pragma: no cover - exercised without onnx only
        raise ImportError("from_onnx needs the onnx package: pip install onnx "
                          "(or rvm[onnx])") from err
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"from_onnx expects an onnx.ModelProto, got {type(model).__name__}")
    ctx = Context(opset_of(model, opset), keep_params_in_input, CONVERTERS)
    ctx.domain_opsets = {e.domain: int(e.version) for e in model.opset_import
                         if e.domain not in ("", "ai.onnx")}
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
        if value_info.type.tensor_type.elem_type == STRING:
            var = Var(value_info.name, ObjectStructInfo())
            ctx.env[value_info.name] = string_input(ctx, value_info.type.tensor_type, var)
        elif value_info.type.HasField("tensor_type"):
            var = Var(value_info.name, ctx.input_sinfo(value_info, dict(shape_dict or {}),
                                                        dtype_dict))
            ctx.env[value_info.name] = var
        else:  # a sequence or optional: its length or presence is known at run time
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
    mod = ComposeLayerNorm()(ctx.bb.get())
    if keep_params_in_input:
        mod["main"] = mod["main"].with_attr({"num_input": len(inputs),
                                              "params": list(ctx.param_arrays)})
    return mod
