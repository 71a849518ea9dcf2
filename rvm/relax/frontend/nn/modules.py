"""The layers of ``rvm.relax.frontend.nn`` (TVM's names and parameter layouts): Linear,
Embedding, LayerNorm, GroupNorm, RMSNorm, Conv2D and the activation modules."""
from rvm.relax.frontend.nn import op
from rvm.relax.frontend.nn.core import Parameter
from rvm.relax.frontend.nn.module import Module


def _positive_int(value, who, what):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{who}: {what} must be a positive int, got {value!r}")
    return value


class Linear(Module):
    """``y = x W^T + b`` with ``weight`` of shape (out_features, in_features).

    ``in_features``/``out_features`` may be strings (symbolic dimensions).
    """

    def __init__(self, in_features, out_features, bias=True, dtype=None, out_dtype=None):
        self.in_features = in_features
        self.out_features = out_features
        self.out_dtype = out_dtype
        self.weight = Parameter((out_features, in_features), dtype)
        self.bias = Parameter((out_features,), dtype if out_dtype is None else out_dtype) \
            if bias else None

    def forward(self, x):
        """The linear transformation of ``x`` (..., in_features)."""
        w = op.permute_dims(self.weight)
        x = op.matmul(x, w, out_dtype=self.out_dtype)
        if self.bias is not None:
            x = x + self.bias
        return x


class Embedding(Module):
    """Rows of ``weight`` (num, dim) looked up by integer indices."""

    def __init__(self, num, dim, dtype=None):
        self.num = num
        self.dim = dim
        self.weight = Parameter((num, dim), dtype)

    def forward(self, x):
        """The embedding of the indices ``x`` (any shape): shape ``x.shape + [dim]``."""
        if x.ndim == 1:
            return op.take(self.weight, x, axis=0)
        flat = op.reshape(x, [-1])
        return op.reshape(op.take(self.weight, flat, axis=0), [*x.shape, self.dim])


class LayerNorm(Module):
    """Layer normalization over the last dimension (size ``normalized_shape``)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=None):
        self.normalized_shape = _positive_int(normalized_shape, "nn.LayerNorm",
                                              "normalized_shape")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter((normalized_shape,), dtype)
            self.bias = Parameter((normalized_shape,), dtype)
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
        """``x`` normalized over its last dimension."""
        return op.layer_norm(x, normalized_shape=self.normalized_shape, weight=self.weight,
                             bias=self.bias, eps=self.eps)


class GroupNorm(Module):
    """Normalization within ``num_groups`` groups of ``num_channels`` channels (axis 1), with
    per-channel ``weight`` and ``bias`` when ``affine``."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        _positive_int(num_groups, "nn.GroupNorm", "num_groups")
        _positive_int(num_channels, "nn.GroupNorm", "num_channels")
        if num_channels % num_groups:
            raise ValueError(f"nn.GroupNorm: num_channels {num_channels} is not divisible by "
                             f"num_groups {num_groups}")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.weight = Parameter((num_channels,), dtype) if affine else None
        self.bias = Parameter((num_channels,), dtype) if affine else None

    def forward(self, x, channel_axis=1, axes=None):
        """``x`` normalized within its channel groups."""
        return op.group_norm(x, self.num_groups, self.weight, self.bias, self.eps,
                             channel_axis, axes)


class RMSNorm(Module):
    """Root-mean-square normalization over ``axes`` with a ``weight`` (hidden_size,) and,
    when ``bias``, an added ``bias``."""

    def __init__(self, hidden_size, axes, epsilon=1e-5, bias=True, dtype=None):
        self.epsilon = epsilon
        self.axes = axes
        self.weight = Parameter((hidden_size,), dtype)
        self.bias = Parameter((hidden_size,), dtype) if bias else None

    def forward(self, x):
        """``x`` normalized over ``axes``, scaled by ``weight`` (plus ``bias``)."""
        out = op.rms_norm(x, weight=self.weight, axes=self.axes, epsilon=self.epsilon)
        if self.bias is not None:
            out = op.add(out, self.bias)
        return out


class Conv2D(Module):
    """2-D convolution with ``weight`` (out_channels, in_channels / groups, k, k) and an
    optional ``bias`` (out_channels,)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, dtype=None, data_layout="NCHW"):
        _positive_int(in_channels, "nn.Conv2D", "in_channels")
        _positive_int(groups, "nn.Conv2D", "groups")
        if in_channels % groups:
            raise ValueError(f"nn.Conv2D: in_channels {in_channels} is not divisible by "
                             f"groups {groups}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = groups
        self.data_layout = data_layout
        kernel = [kernel_size, kernel_size] if isinstance(kernel_size, int) else \
            list(kernel_size)
        self.weight = Parameter((out_channels, in_channels // groups, *kernel), dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None

    def forward(self, x):
        """The convolution of ``x`` (N, C, H, W)."""
        return op.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups, self.data_layout)


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, x):
        """ReLU of ``x``."""
        return op.relu(x)


class SiLU(Module):
    """x * sigmoid(x)."""

    def forward(self, x):
        """SiLU of ``x``."""
        return op.silu(x)


class GELU(Module):
    """The Gaussian error linear unit."""

    def forward(self, x):
        """GELU of ``x``."""
        return op.gelu(x)


class Identity(Module):
    """Returns its input."""

    def forward(self, x):
        """``x``."""
        return x
