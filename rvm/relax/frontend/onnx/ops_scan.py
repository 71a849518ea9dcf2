"""ONNX Scan, unrolled: the body is converted once per element of the scanned axis.
Opset 8's form, with a leading batch axis, is unrolled over the batch too.

``Scan(state..., scan_input...)`` runs its body over the slices of the scan inputs
along their scan axes (forward, or backward for direction 1), threading the states;
it returns the final states and, per scan output, the body's slices stacked along
that output's axis (in reverse for direction 1). The sequence length must be static
and non-zero (an unrolled body cannot repeat a number of times known only at run
time); each iteration's body is converted in the enclosing values plus its own inputs,
so it reads the enclosing graph's values as ONNX's scoping does.
"""
from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_shape import normalize_axis
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.values import tensor_value
from rvm.relax.op import index, join, manipulate

#: Unrolling beyond this many iterations would make modules too large to build.
MAX_UNROLL = 4096


def _axes(attrs, name, count, ranks):
    axes = attrs.get(name) or [0] * count
    if len(axes) != count:
        raise OnnxImportError(f"Scan's {name} has {len(axes)} entries, expected {count}")
    return [normalize_axis(int(a), r) for a, r in zip(axes, ranks)]


def _directions(attrs, name, count):
    out = [int(d) for d in (attrs.get(name) or [0] * count)]
    if len(out) != count or any(d not in (0, 1) for d in out):
        raise OnnxImportError(f"Scan's {name} must be {count} values of 0 or 1, got {out}")
    return out


def _length(ctx, scans, axes):
    lengths = {ctx.shape(x)[a] for x, a in zip(scans, axes)}
    if len(lengths) != 1:
        raise OnnxImportError("Scan's inputs differ in sequence length: "
                              f"{sorted(map(str, lengths))}")
    length, = lengths
    if not isinstance(length, int):
        raise OnnxImportError(f"Scan's sequence length must be static, got {length}")
    if not 0 < length <= MAX_UNROLL:
        raise OnnxImportError(f"Scan's sequence length must be in 1..{MAX_UNROLL}, got {length}")
    return length


def _slice(ctx, x, axis, k):
    part = ctx.emit(index.strided_slice(x, [axis], [k], [k + 1]))
    return ctx.emit(manipulate.squeeze(part, [axis]))


def _run_body(ctx, body, values):
    """The outputs of one iteration of ``body`` whose inputs are ``values``."""
    outer = ctx.env
    ctx.env = dict(outer)
    for proto in body.initializer:
        ctx.env[proto.name] = tensor_value(proto)
    for value_info, value in zip(body.input, values):
        ctx.env[value_info.name] = value
    node = ctx.node
    try:
        ctx.convert_nodes(body.node)
        missing = [o.name for o in body.output if o.name not in ctx.env]
        if missing:
            raise OnnxImportError(f"Scan's body never computes its outputs {missing}")
        return [ctx.env[o.name] for o in body.output]
    finally:
        ctx.env, ctx.node = outer, node


@converter("Scan")
def _scan(ctx, inputs, attrs):
    if ctx.opset >= 9:
        return _unroll(ctx, inputs, attrs)
    # opset 8: a leading batch axis on every input and output, scanned one batch at a time
    if inputs[0] is not None:
        raise OnnxImportError("Scan's sequence_lens (opset 8) is not supported; expected it "
                              "omitted (every sequence its full length)")
    inputs = [ctx.tensor(v) for v in inputs[1:]]
    attrs = dict(attrs, scan_input_directions=attrs.get("directions"))
    batch = ctx.shape(inputs[0])[0]
    if not isinstance(batch, int):
        raise OnnxImportError(f"Scan's batch size (opset 8) must be static, got {batch}")
    per_batch = [_unroll(ctx, [_slice(ctx, x, 0, b) for x in inputs], attrs)
                 for b in range(batch)]
    return [ctx.emit(join.concat([ctx.emit(manipulate.expand_dims(ctx.tensor(v), [0]))
                                  for v in values], 0)) for values in zip(*per_batch)]


def _unroll(ctx, inputs, attrs):
    body = attrs["body"]
    n_scan = int(attrs["num_scan_inputs"])
    n_state = len(inputs) - n_scan
    if n_state < 0 or len(body.input) != len(inputs):
        raise OnnxImportError(f"Scan's body takes {len(body.input)} inputs, the node gives "
                              f"{len(inputs)} with {n_scan} scan inputs")
    states = list(inputs[:n_state])
    scans = [ctx.tensor(v) for v in inputs[n_state:]]
    in_axes = _axes(attrs, "scan_input_axes", n_scan, [ctx.ndim(x) for x in scans])
    in_dirs = _directions(attrs, "scan_input_directions", n_scan)
    n_out = len(body.output) - n_state
    out_dirs = _directions(attrs, "scan_output_directions", n_out)
    length = _length(ctx, scans, in_axes)
    slices = [[] for _ in range(n_out)]
    for step in range(length):
        values = [_slice(ctx, x, a, length - 1 - step if d else step)
                  for x, a, d in zip(scans, in_axes, in_dirs)]
        outputs = _run_body(ctx, body, states + values)
        states = outputs[:n_state]
        for k, value in enumerate(outputs[n_state:]):
            slices[k].append(ctx.tensor(value))
    stacked = []
    out_axes = _axes(attrs, "scan_output_axes", n_out,
                     [ctx.ndim(parts[0]) + 1 for parts in slices])
    for parts, axis, direction in zip(slices, out_axes, out_dirs):
        parts = parts[::-1] if direction else parts
        parts = [ctx.emit(manipulate.expand_dims(p, [axis])) for p in parts]
        stacked.append(parts[0] if len(parts) == 1 else ctx.emit(join.concat(parts, axis)))
    return states + stacked
