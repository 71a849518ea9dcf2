"""ONNX Dropout: the identity at inference; in training mode, a mask drawn at run time.

Training mode multiplies the input by a random bool mask (kept where a uniform
sample is at least ``ratio``) and by ``1 / (1 - ratio)``. The mask comes from the
registered ``runtime.random.dropout_mask`` (``rvm.runtime.random``), called in
destination passing style with the node's ``seed`` attribute (a fresh seed on
every run when the node has none), the ratio and training_mode, which may be
constants or values computed at run time.
"""
import numpy as np

from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.op import base, binary, create, search, unary
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.random import DROPOUT_MASK

#: The seed passed when the node has no ``seed`` attribute: draw a fresh one per run.
FRESH_SEED = -1


def _optional(inputs, k):
    return inputs[k] if len(inputs) > k else None


def _known(value):
    """A constant operand's single value, or None when it is computed at run time."""
    return value.reshape(-1)[0] if isinstance(value, np.ndarray) else None


@converter("Dropout")
def _dropout(ctx, inputs, attrs):
    x = inputs[0]
    shape = ctx.shape(x)
    ratio = _optional(inputs, 1)
    training = _optional(inputs, 2)
    if ctx.opset < 12:  # ratio was an attribute, and there was no training mode
        ratio, training = None, None
    if ratio is None:
        ratio = np.array(attrs.get("ratio", 0.5), "float32")
    if training is None or (_known(training) is not None and not bool(_known(training))):
        return [x, ctx.emit(create.ones(shape, "bool"))]
    if _known(ratio) is not None and not 0.0 <= float(_known(ratio)) < 1.0:
        raise ValueError(f"ratio must be in [0, 1), got {float(_known(ratio))}")
    seed = int(attrs["seed"]) if "seed" in attrs else FRESH_SEED
    dtype = ctx.dtype(x)
    ratio = ctx.tensor(ratio)
    train = ctx.tensor(training, "bool")
    mask = ctx.emit(base.call_dps_packed(
        DROPOUT_MASK, (ctx.tensor(np.array(seed, "int64")), ratio, train),
        TensorStructInfo(shape, "bool")), "dropout_mask")
    one = ctx.tensor(np.array(1, dtype))
    scale = binary.divide(one, binary.subtract(one, unary.astype(ratio, dtype)))
    scale = search.where(unary.astype(train, "bool"), scale, one)
    kept = binary.multiply(ctx.tensor(x), unary.astype(mask, dtype))
    return [ctx.emit(binary.multiply(kept, ctx.emit(scale))), mask]
