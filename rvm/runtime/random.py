"""Random masks drawn at run time, for the training form of dropout.

``runtime.random.dropout_mask(seed, ratio, training, out)`` (destination passing
style) fills the bool tensor ``out`` with ``u >= ratio``, where ``u`` are
uniform samples in [0, 1) from the Mersenne Twister (MT19937) seeded with
``seed``: the legacy numpy generator, ``numpy.random.RandomState(seed).uniform(0, 1,
out.shape)``, which is how onnx's reference and its node tests draw Dropout's
mask. A ``seed`` below zero draws a fresh seed from the operating system on
every call. When ``training`` is false, or ``ratio`` is 0, no sample is drawn
and the mask is all true.

>>> import numpy as np
>>> from rvm.runtime.ndarray import array
>>> out = array(np.zeros((2, 3), "bool"))
>>> _ = dropout_mask(array(np.array(0)), array(np.float32(0.5)), array(np.array(True)), out)
>>> out.numpy().tolist() == (np.random.RandomState(0).uniform(0, 1, (2, 3)) >= 0.5).tolist()
True
"""
import numpy as np

from rvm.runtime.ndarray import NDArray
from rvm.runtime.packed_func import register_builtin

#: The registered name of the mask generator.
DROPOUT_MASK = "runtime.random.dropout_mask"


def _scalar(value, what):
    if not isinstance(value, NDArray) or value.shape not in ((), (1,)):
        raise TypeError(f"{DROPOUT_MASK}: {what} must be a tensor of one element, got "
                        f"{value!r:.60}")
    return value.numpy().reshape(())


def dropout_mask(seed, ratio, training, out):
    """Fills the bool tensor ``out`` with the dropout mask (see the module docstring)."""
    if not isinstance(out, NDArray) or str(out.dtype) != "bool":
        raise TypeError(f"{DROPOUT_MASK}: the output must be a bool tensor, got {out!r:.60}")
    seed = int(_scalar(seed, "the seed"))
    drop = _scalar(ratio, "the ratio")
    if not 0.0 <= float(drop) < 1.0:
        raise ValueError(f"{DROPOUT_MASK}: the ratio must be in [0, 1), got {float(drop)}")
    if not bool(_scalar(training, "training_mode")) or float(drop) == 0.0:
        out.copyfrom(np.ones(out.shape, "bool"))
        return
    rng = np.random.RandomState(None if seed < 0 else seed & 0xFFFFFFFF)
    out.copyfrom(rng.uniform(0.0, 1.0, out.shape) >= drop)


register_builtin(DROPOUT_MASK, dropout_mask)  # called by compiled programs (a VM builtin)
