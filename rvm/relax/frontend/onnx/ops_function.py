"""ONNX operators defined by a function body: the node is expanded into the body onnx's
operator schema gives (for the model's opset, and for context-dependent functions for
the node's attributes and input types), and the body's nodes are converted in its place.

The body is closed: its nodes read only the function's inputs, so it is converted in an
environment of its own (the node's inputs under the function's input names) and its
outputs are handed back as the node's. Attribute references (``ref_attr_name``) take the
node's attribute, or the function's default, or are dropped when neither exists (the
referring operator's default applies). The body's nodes are converted at the function's
own default-domain opset. An operator of another domain (FlexAttention of
``ai.onnx.preview``) is expanded by the body of the model's opset of that domain.
"""
from rvm.relax.frontend.onnx.common import ONNX_DTYPES, OnnxImportError
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.strings import StringTensor
from rvm.relax.frontend.onnx.values import Optional, Sequence

#: Operators converted by expanding their function body.
FUNCTION_OPS = (
    "Attention", "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "RotaryEmbedding",
    "SwiGLU", "BlackmanWindow", "HammingWindow", "HannWindow", "CausalConvWithState",
    "LinearAttention", "FlexAttention",
)
#: Operators of other domains converted by expanding their function body.
DOMAIN_FUNCTION_OPS = {"ai.onnx.preview": ("FlexAttention",)}
_ELEM_TYPES = {dtype: code for code, dtype in ONNX_DTYPES.items()}


def _type_proto(ctx, value):
    """The onnx TypeProto of a tensor value (element type and dimensions; a symbolic
    dimension as a named parameter), as a context-dependent function body needs it."""
    from onnx import TypeProto

    proto = TypeProto()
    if value is None:
        return proto
    if isinstance(value, (Sequence, Optional, StringTensor)):
        raise OnnxImportError("a function body's inputs must be tensors, got "
                              f"{type(value).__name__}")
    tensor = proto.tensor_type
    tensor.elem_type = _ELEM_TYPES[ctx.dtype(value)]
    shape = tensor.shape
    for dim in ctx.shape(value):
        entry = shape.dim.add()
        if isinstance(dim, int):
            entry.dim_value = dim
        else:
            entry.dim_param = str(dim)
    return proto


def function_body(ctx, node, inputs):
    """The FunctionProto that defines ``node`` at the import's opset, and the schema's
    attribute defaults by name."""
    import onnx.defs

    opset = ctx.opset if node.domain in ("", "ai.onnx") else \
        ctx.domain_opsets.get(node.domain, 1)
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError as err:
        raise OnnxImportError(f"no schema for {node.op_type} at opset {opset}") from err
    defaults = {name: attr.default_value for name, attr in schema.attributes.items()
                if attr.default_value.type}
    if schema.has_context_dependent_function:
        versions = [v for v in schema.context_dependent_function_opset_versions
                    if v <= opset]
        types = [_type_proto(ctx, v).SerializeToString() for v in inputs]
        data = schema.get_context_dependent_function_with_opset_version(
            max(versions), node.SerializeToString(), types) if versions else None
        if data:
            return onnx.FunctionProto.FromString(data), defaults
    if schema.has_function:
        versions = [v for v in schema.function_opset_versions if v <= opset]
        if versions:
            return onnx.FunctionProto.FromString(
                schema.get_function_with_opset_version(max(versions))), defaults
    raise OnnxImportError(f"{node.op_type} has no function body at opset {opset}")


def _bind_attributes(body, node, schema_defaults):
    """The body's nodes with attribute references replaced by the node's attributes (or
    the function's or the schema's defaults)."""
    from onnx import NodeProto

    given = {a.name: a for a in node.attribute}
    defaults = dict(schema_defaults)
    defaults.update({a.name: a for a in body.attribute_proto})
    out = []
    for inner in body.node:
        copy = NodeProto()
        copy.CopyFrom(inner)
        attrs = []
        for attr in copy.attribute:
            if not attr.ref_attr_name:
                attrs.append(attr)
                continue
            source = given.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
            if source is not None:
                bound = type(attr)()
                bound.CopyFrom(source)
                bound.name = attr.name
                attrs.append(bound)
        del copy.attribute[:]
        copy.attribute.extend(attrs)
        out.append(copy)
    return out


def _opset(body, default):
    for entry in body.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return default


@converter(*FUNCTION_OPS)
def _expand(ctx, inputs, attrs):
    node = ctx.node
    body, defaults = function_body(ctx, node, inputs)
    outer_env, outer_opset = ctx.env, ctx.opset
    ctx.env = {"": None}
    for name, value in zip(body.input, inputs):
        ctx.env[name] = value
    for name in list(body.input)[len(inputs):]:
        ctx.env[name] = None
    ctx.opset = _opset(body, outer_opset)
    try:
        ctx.convert_nodes(_bind_attributes(body, node, defaults))
        missing = [o for o, want in zip(body.output, node.output) if want and o not in ctx.env]
        if missing:
            raise OnnxImportError(f"the function body of {node.op_type} does not compute "
                                  f"{missing}")
        return [ctx.env.get(o) for o in body.output]
    finally:
        ctx.env, ctx.opset, ctx.node = outer_env, outer_opset, node


for _domain, _ops in DOMAIN_FUNCTION_OPS.items():
    converter(*_ops, domain=_domain)(_expand)
