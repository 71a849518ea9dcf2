"""ONNX recurrent layers RNN, GRU and LSTM, unrolled over a static sequence length.

Per direction (forward, reverse, or both), the input projections of every step come
from one matmul; each step adds the recurrent projection of the previous hidden state
and applies the gates (ONNX's gate orders: LSTM ``i o f c``, GRU ``z r h``), with the
activations named by the node (default RNN ``Tanh``; GRU ``Sigmoid, Tanh``; LSTM
``Sigmoid, Tanh, Tanh``), converted by the importer's own converters of those
operators. ``sequence_lens`` masks the steps past a batch entry's length: its states
stop changing and its outputs are zero (a reverse pass then starts at the entry's last
step). ``layout`` 1 puts the batch axis first in inputs and outputs.
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.ops_math import scalar
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import binary, index, join, linear_algebra, manipulate, search, unary

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                        "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
_DIRECTIONS = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}


class _Activation:
    """One named activation with its alpha and beta, as its ONNX operator converts it."""

    def __init__(self, name, alpha, beta):
        self.name, self.alpha, self.beta = name, alpha, beta

    def __call__(self, ctx, x):
        from onnx import helper

        if self.name == "Affine":
            return ctx.emit(binary.add(binary.multiply(x, scalar(ctx, self.alpha, "float32")),
                                       scalar(ctx, self.beta, "float32")))
        if self.name == "ScaledTanh":
            inner = ctx.emit(unary.tanh(binary.multiply(x, scalar(ctx, self.beta,
                                                                  "float32"))))
            return ctx.emit(binary.multiply(inner, scalar(ctx, self.alpha, "float32")))
        fn = ctx.converters.get(self.name)
        if fn is None:
            raise OnnxImportError(f"activation {self.name!r} is not an operator the importer "
                                  "converts")
        attrs = {k: v for k, v in (("alpha", self.alpha), ("beta", self.beta))
                 if v is not None}
        outer = ctx.node
        ctx.node = helper.make_node(self.name, ["x"], ["y"])
        try:
            out = fn(ctx, [x], attrs)
        finally:
            ctx.node = outer
        return out[0] if isinstance(out, (list, tuple)) else out


def _activations(op, attrs, count):
    names = [n if isinstance(n, str) else n.decode() for n in attrs.get("activations") or []]
    per = len(_DEFAULT_ACTIVATIONS[op])
    if not names:
        names = _DEFAULT_ACTIVATIONS[op] * count
    if len(names) != per * count:
        raise OnnxImportError(f"{op} expects {per * count} activations, got {names}")
    alphas = list(attrs.get("activation_alpha") or [])
    betas = list(attrs.get("activation_beta") or [])
    out = []
    for k, name in enumerate(names):
        out.append(_Activation(name, alphas[k] if k < len(alphas) else None,
                               betas[k] if k < len(betas) else None))
    return [out[d * per:(d + 1) * per] for d in range(count)]


def _take(ctx, x, axis, k, squeeze=True):
    part = ctx.emit(index.strided_slice(x, [axis], [k], [k + 1]))
    return ctx.emit(manipulate.squeeze(part, [axis])) if squeeze else part


def _split(ctx, x, count, axis=-1):
    size = ctx.shape(x)[axis] // count
    axis = axis % ctx.ndim(x)
    return [ctx.emit(index.strided_slice(x, [axis], [k * size], [(k + 1) * size]))
            for k in range(count)]


def _transposed(ctx, w):
    return ctx.emit(manipulate.permute_dims(w, [1, 0]))


class _Cell:
    """The weights of one direction and the step of its recurrence."""

    def __init__(self, ctx, op, w, r, b, p, acts, attrs):
        self.ctx, self.op, self.acts = ctx, op, acts
        self.w_t, self.r_t = _transposed(ctx, w), _transposed(ctx, r)
        self.gates = _GATES[op]
        self.wb, self.rb = _split(ctx, b, 2) if b is not None else (None, None)
        self.p = _split(ctx, p, 3) if p is not None else None
        self.clip = attrs.get("clip")
        self.linear_before_reset = bool(attrs.get("linear_before_reset", 0))
        self.input_forget = bool(attrs.get("input_forget", 0))

    def _pre(self, x):
        """Gate pre-activations clipped to ``clip`` when given."""
        if self.clip is None:
            return x
        return self.ctx.emit(unary.clip(x, -float(self.clip), float(self.clip)))

    def step(self, xw, h, c):
        """``(h, c)`` after one step; ``xw`` is the step's input projection (with bias)."""
        ctx = self.ctx
        hr = ctx.emit(linear_algebra.matmul(h, self.r_t))
        if self.rb is not None:
            hr = ctx.emit(binary.add(hr, self.rb))
        if self.op == "RNN":
            return self.acts[0](ctx, self._pre(ctx.emit(binary.add(xw, hr)))), None
        xs, hs = _split(ctx, xw, self.gates), _split(ctx, hr, self.gates)
        f, g = self.acts[0], self.acts[1]
        if self.op == "GRU":
            z = f(ctx, self._pre(ctx.emit(binary.add(xs[0], hs[0]))))
            r = f(ctx, self._pre(ctx.emit(binary.add(xs[1], hs[1]))))
            if self.linear_before_reset:  # r * (h Rh^T + Rbh)
                rec = ctx.emit(binary.multiply(r, hs[2]))
            else:
                r_h = ctx.emit(binary.multiply(r, h))
                rh_t = _split(ctx, self.r_t, 3)[2]
                rec = ctx.emit(linear_algebra.matmul(r_h, rh_t))
                if self.rb is not None:
                    rec = ctx.emit(binary.add(rec, _split(ctx, self.rb, 3)[2]))
            cand = g(ctx, self._pre(ctx.emit(binary.add(xs[2], rec))))
            one = scalar(ctx, 1.0, ctx.dtype(h))
            keep = ctx.emit(binary.multiply(z, h))
            return ctx.emit(binary.add(binary.multiply(binary.subtract(one, z), cand),
                                       keep)), None
        # LSTM: i o f c
        pre = [ctx.emit(binary.add(a, b)) for a, b in zip(xs, hs)]
        if self.p is not None:
            pre[0] = ctx.emit(binary.add(pre[0], binary.multiply(self.p[0], c)))
            pre[2] = ctx.emit(binary.add(pre[2], binary.multiply(self.p[2], c)))
        i = f(ctx, self._pre(pre[0]))
        forget = f(ctx, self._pre(pre[2]))
        if self.input_forget:
            forget = ctx.emit(binary.subtract(scalar(ctx, 1.0, ctx.dtype(h)), i))
        cand = g(ctx, self._pre(pre[3]))
        c = ctx.emit(binary.add(binary.multiply(forget, c), binary.multiply(i, cand)))
        if self.p is not None:
            pre[1] = ctx.emit(binary.add(pre[1], binary.multiply(self.p[1], c)))
        o = f(ctx, self._pre(pre[1]))
        return ctx.emit(binary.multiply(o, self.acts[2](ctx, c))), c


def _optional(ctx, inputs, k):
    return ctx.tensor(inputs[k]) if len(inputs) > k and inputs[k] is not None else None


@converter("RNN", "GRU", "LSTM")
def _recurrent(ctx, inputs, attrs):
    op = ctx.node.op_type
    x, w, r = (ctx.tensor(v) for v in inputs[:3])
    b, lens, h0 = (_optional(ctx, inputs, k) for k in (3, 4, 5))
    c0, p = (_optional(ctx, inputs, k) for k in (6, 7)) if op == "LSTM" else (None, None)
    layout = int(attrs.get("layout", 0))
    if layout:
        x = ctx.emit(manipulate.permute_dims(x, [1, 0, 2]))
        h0, c0 = (None if v is None else ctx.emit(manipulate.permute_dims(v, [1, 0, 2]))
                  for v in (h0, c0))
    direction = attrs.get("direction", "forward")
    if direction not in _DIRECTIONS:
        raise OnnxImportError(f"{op}'s direction must be forward, reverse or bidirectional, "
                              f"got {direction!r}")
    length, batch, _ = ctx.shape(x)
    if not isinstance(length, int):
        raise OnnxImportError(f"{op}'s sequence length must be static, got {length}")
    hidden = int(attrs["hidden_size"])
    dtype = ctx.dtype(x)
    acts = _activations(op, attrs, len(_DIRECTIONS[direction]))
    masks = None
    if lens is not None:
        lens = ctx.emit(manipulate.reshape(unary.astype(lens, "int64"), [batch, 1]))
        masks = [ctx.emit(binary.less(scalar(ctx, t, "int64"), lens)) for t in range(length)]
    ys, hs, cs = [], [], []
    for d, backward in enumerate(_DIRECTIONS[direction]):
        part = [None if v is None else _take(ctx, v, 0, d) for v in (w, r, b, p)]
        cell = _Cell(ctx, op, *part, acts[d], attrs)
        zeros = ctx.tensor(np.zeros((batch, hidden), dtype))
        h = _take(ctx, h0, 0, d) if h0 is not None else zeros
        c = _take(ctx, c0, 0, d) if c0 is not None else zeros
        xw = ctx.emit(linear_algebra.matmul(x, cell.w_t))
        if cell.wb is not None:
            xw = ctx.emit(binary.add(xw, cell.wb))
        outs = [None] * length
        for t in (range(length - 1, -1, -1) if backward else range(length)):
            h_new, c_new = cell.step(_take(ctx, xw, 0, t), h, c)
            if masks is None:
                h, c, outs[t] = h_new, c_new, h_new
            else:
                h = ctx.emit(search.where(masks[t], h_new, h))
                c = ctx.emit(search.where(masks[t], c_new, c)) if c_new is not None else c
                outs[t] = ctx.emit(search.where(masks[t], h_new, zeros))
        steps = [ctx.emit(manipulate.expand_dims(y, [0])) for y in outs]
        ys.append(steps[0] if length == 1 else ctx.emit(join.concat(steps, 0)))
        hs.append(ctx.emit(manipulate.expand_dims(h, [0])))
        if op == "LSTM":
            cs.append(ctx.emit(manipulate.expand_dims(c, [0])))

    y = ctx.emit(join.concat([ctx.emit(manipulate.expand_dims(v, [1])) for v in ys], 1)) \
        if len(ys) > 1 else ctx.emit(manipulate.expand_dims(ys[0], [1]))
    y_h, y_c = (v[0] if len(v) == 1 else ctx.emit(join.concat(v, 0)) if v else None
                for v in (hs, cs))
    if layout:  # Y [batch, seq, dirs, hidden]; Y_h, Y_c [batch, dirs, hidden]
        y = ctx.emit(manipulate.permute_dims(y, [2, 0, 1, 3]))
        y_h, y_c = (v if v is None else ctx.emit(manipulate.permute_dims(v, [1, 0, 2]))
                    for v in (y_h, y_c))
    return [y, y_h, y_c] if op == "LSTM" else [y, y_h]
