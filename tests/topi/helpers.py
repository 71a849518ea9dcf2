"""Runs topi operators through create_prim_func and the test TIR interpreter."""
import numpy as np

from rvm import te
from tests.tir.evaluator import run


def evaluate(out, inputs, arrays):
    """The numpy value of tensor ``out`` computed from placeholders ``inputs`` = ``arrays``."""
    func = te.create_prim_func(list(inputs) + [out])
    result = np.zeros(tuple(d.value for d in out.shape), out.dtype.numpy_dtype)
    run(func, *[np.asarray(a) for a in arrays], result)
    return result


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")
