"""The converter and fold tables of the ONNX importer, and the translation of one node.

A converter is ``fn(ctx, inputs, attrs) -> value or list of values``: ``ctx`` is
the import's ``context.Context``, ``inputs`` the values of the node's inputs (None for
an omitted optional input) and ``attrs`` its attributes by name. A fold is the
same signature over numpy arrays only; it runs instead of the converter when
every input is a small integer array known at import (``is_shape_value``: shapes,
axes, sizes, symbolic dimensions). Other constants go through the converter, and
FoldConstant evaluates the operators it emits by their one definition (legalization).
"""
import numpy as np

from rvm.ir.expr import PrimExpr, RelaxExpr

from rvm.relax.frontend.onnx.common import ConstantRequired, OnnxImportError

CONVERTERS = {}
#: (domain, op type) -> converter, for operators of domains other than the default one
DOMAIN_CONVERTERS = {}
FOLDS = {}
FOLD_MAX_ELEMENTS = 64  # a shape value is at most this long (ranks, not tensors of data)


def converter(*op_types, domain=None):
    """Decorator: registers a converter under each ONNX op type of ``op_types`` (of the
    default domain, or of ``domain`` when given)."""

    def register(fn):
        for op_type in op_types:
            if domain is None:
                CONVERTERS[op_type] = fn
            else:
                DOMAIN_CONVERTERS[(domain, op_type)] = fn
        return fn

    return register


def fold(*op_types):
    """Decorator: registers a fold (numpy evaluation at import) for ``op_types``."""

    def register(fn):
        for op_type in op_types:
            FOLDS[op_type] = fn
        return fn

    return register


def is_shape_value(value):
    """Whether a folding input is a small array of integers, bools or symbolic dimensions."""
    return value is None or (isinstance(value, np.ndarray) and value.dtype.kind in "iubO"
                             and value.size <= FOLD_MAX_ELEMENTS)


def node_text(ctx, node):
    """How error messages name a node: its name (or first output), op type and opset."""
    name = node.name or (node.output[0] if node.output else "?")
    return f"node '{name}' ({node.op_type}, opset {ctx.opset})"


def convert_node(ctx, node, attrs, converters):
    """The values of ``node``'s outputs (a list)."""
    if node.domain not in ("", "ai.onnx"):
        fn = DOMAIN_CONVERTERS.get((node.domain, node.op_type))
        if fn is None:
            known = sorted(f"{d}.{o}" for d, o in DOMAIN_CONVERTERS)
            raise OnnxImportError(f"{node_text(ctx, node)}: operators of domain "
                                  f"'{node.domain}' are not supported; expected the default "
                                  f"ONNX domain or one of {', '.join(known)}")
    else:
        fn = converters.get(node.op_type)
    if fn is None:
        raise OnnxImportError(f"{node_text(ctx, node)} is not supported; supported op types: "
                              f"{', '.join(sorted(converters))}")
    inputs = []
    for name in node.input:
        if name not in ctx.env:
            raise OnnxImportError(f"{node_text(ctx, node)}: input '{name}' is used before it "
                                  "is defined")
        inputs.append(ctx.env[name])
    folding = node.op_type in FOLDS and all(is_shape_value(v) for v in inputs)
    try:
        out = (FOLDS[node.op_type] if folding else fn)(ctx, inputs, attrs)
    except OnnxImportError as err:
        if str(err).startswith("node '"):
            raise
        if isinstance(err, ConstantRequired):
            raise ConstantRequired(f"{node_text(ctx, node)}: {err}", err.input_name) from err
        raise OnnxImportError(f"{node_text(ctx, node)}: {err}") from err
    except (TypeError, ValueError, IndexError, KeyError, NotImplementedError) as err:
        raise OnnxImportError(f"{node_text(ctx, node)}: {err}") from err
    outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    if folding:  # numpy gives scalars (np.float32, int) for 0-d results
        outputs = [v if v is None or isinstance(v, (np.ndarray, RelaxExpr)) else
                   np.asarray(v, dtype=object if isinstance(v, PrimExpr) else None)
                   for v in outputs]
    if len(outputs) < len([o for o in node.output if o]):
        raise OnnxImportError(f"{node_text(ctx, node)}: {len(node.output)} outputs requested, "
                              f"the converter gives {len(outputs)}")
    return outputs


def attr_ints(attrs, name, default=None):
    """An attribute that is a list of ints, as a list (``default`` when absent)."""
    value = attrs.get(name, default)
    return None if value is None else [int(v) for v in value]


def optional_const(ctx, value, what, default=None):
    """A constant optional input as a numpy array (``default`` when omitted)."""
    if value is None:
        return default
    return ctx.constant(value, what)
