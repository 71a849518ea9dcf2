"""numpy definitions of the nn operators the legalized kernels are checked against, written
the plain way (explicit windows), following PyTorch's conventions."""
import numpy as np


def conv2d(x, w, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """NCHW data, OIHW weight; padding (top, left, bottom, right)."""
    (sh, sw), (dh, dw) = stride, dilation
    t, left, b, r = padding
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))
    oh = (h + t + b - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + r - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = xp[:, g * i:(g + 1) * i, ky * dh:ky * dh + sh * (oh - 1) + 1:sh,
                           kx * dw:kx * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nihw,oi->nohw", patch, w[g * og:(g + 1) * og, :, ky, kx])
    return out.astype(x.dtype)


def conv2d_transpose(x, w, stride=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1):
    """NCHW data, IOHW weight (O per group): every input element scatters the kernel."""
    (sh, sw), (dh, dw), (oph, opw) = stride, dilation, output_padding
    t, left, b, r = padding
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    full = np.zeros((n, og * groups, full_h, full_w), np.float64)
    per_group = c // groups
    for ci in range(c):
        g = ci // per_group
        for ky in range(kh):
            for kx in range(kw):
                contrib = np.einsum("nhw,o->nohw", x[:, ci], w[ci, :, ky, kx])
                full[:, g * og:(g + 1) * og, ky * dh:ky * dh + sh * (h - 1) + 1:sh,
                     kx * dw:kx * dw + sw * (wd - 1) + 1:sw] += contrib
    return full[:, :, t:full_h - b, left:full_w - r].astype(x.dtype)


def _pool_out(size, k, s, d, before, after, ceil_mode):
    span = size + before + after - d * (k - 1) - 1
    out = -(-span // s) + 1 if ceil_mode else span // s + 1
    if ceil_mode and (out - 1) * s >= size + before:
        out -= 1
    return out


def pool2d(x, kind, kernel, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
           ceil_mode=False, count_include_pad=False):
    """max or avg pooling of NCHW data, PyTorch's rules (padding (top, left, bottom, right))."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    t, left, b, r = padding
    n, c, h, w = x.shape
    oh = _pool_out(h, kh, sh, dh, t, b, ceil_mode)
    ow = _pool_out(w, kw, sw, dw, left, r, ceil_mode)
    out = np.zeros((n, c, oh, ow), x.dtype)
    for oy in range(oh):
        for ox in range(ow):
            ys = [oy * sh - t + ky * dh for ky in range(kh)]
            xs = [ox * sw - left + kx * dw for kx in range(kw)]
            vy = [y for y in ys if 0 <= y < h]
            vx = [v for v in xs if 0 <= v < w]
            window = x[:, :, vy][:, :, :, vx]
            if kind == "max":
                out[:, :, oy, ox] = window.max(axis=(2, 3))
            else:
                if count_include_pad:
                    count = len([y for y in ys if y < h + b]) * len([v for v in xs if v < w + r])
                else:
                    count = len(vy) * len(vx)
                out[:, :, oy, ox] = window.sum(axis=(2, 3)) / count
    return out


def adaptive_avg_pool2d(x, size):
    """PyTorch's AdaptiveAvgPool2d on NCHW data."""
    n, c, h, w = x.shape
    oh, ow = size
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        y0, y1 = i * h // oh, -(-(i + 1) * h // oh)
        for j in range(ow):
            x0, x1 = j * w // ow, -(-(j + 1) * w // ow)
            out[:, :, i, j] = x[:, :, y0:y1, x0:x1].mean(axis=(2, 3))
    return out


def layer_norm(x, gamma, beta, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps) * gamma + beta).astype(x.dtype)


def group_norm(x, gamma, beta, groups, eps=1e-5):
    """NCHW... data, channels on axis 1, statistics over the group and the other axes."""
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    var = grouped.var(axis=2, keepdims=True)
    normed = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (normed * gamma.reshape(shape) + beta.reshape(shape)).astype(x.dtype)


def rms_norm(x, weight, axes, eps=1e-5):
    ms = (x * x).mean(axis=axes, keepdims=True)
    return (x / np.sqrt(ms + eps) * weight).astype(x.dtype)


def batch_norm(x, gamma, beta, mean, var, axis=1, eps=1e-5, momentum=0.1, training=False):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    others = tuple(a for a in range(x.ndim) if a != axis)
    if training:
        batch_mean, batch_var = x.mean(axis=others), x.var(axis=others)
        new_mean = mean * (1 - momentum) + batch_mean * momentum
        new_var = var * (1 - momentum) + batch_var * momentum
        mean, var = batch_mean, batch_var
    else:
        new_mean, new_var = mean, var
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    out = out * gamma.reshape(shape) + beta.reshape(shape)
    return out.astype(x.dtype), new_mean.astype(x.dtype), new_var.astype(x.dtype)


def attention(q, k, v, bias=None, scale=None, causal=None, window=None):
    """BSNH attention with TVM's masks (masked scores: the dtype's lowest value)."""
    s, s_kv = q.shape[1], k.shape[1]
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    scores = np.einsum("bind,bjnd->bnij", q, k).astype(np.float64) * scale
    if bias is not None:
        scores = scores + bias
    i = np.arange(s)[:, None]
    j = np.arange(s_kv)[None, :]
    offset = s_kv - s if causal == "BottomRight" else 0
    keep = np.ones((s, s_kv), bool)
    if causal is not None:
        keep &= j <= i + offset
    if window is not None:
        keep &= i + offset - j < window
    scores = np.where(keep, scores, np.finfo(q.dtype).min)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p = p / p.sum(axis=-1, keepdims=True)
    return np.einsum("bnij,bjnd->bind", p, v).astype(q.dtype)
