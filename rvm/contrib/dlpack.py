"""Calling rvm functions on other frameworks' tensors through DLPack (TVM's
``tvm.contrib.dlpack``): the tensors are shared, not copied.

>>> import numpy as np
>>> from rvm.runtime.packed_func import PackedFunc
>>> double = convert_func(PackedFunc(lambda x, y: y.copyfrom(x.numpy() * 2)), np.ndarray,
...                       lambda a: a)
>>> out = np.zeros(2, "float32")
>>> _ = double(np.ones(2, "float32"), out)
>>> out
array([2., 2.], dtype=float32)
"""
from rvm.runtime.ndarray import from_dlpack


def convert_func(rvm_func, tensor_type, to_dlpack_func):
    """``rvm_func`` taking ``tensor_type`` arguments: each is passed as the NDArray sharing
    its memory, ``from_dlpack(to_dlpack_func(arg))``; other arguments pass unchanged."""

    def _wrapper(*args):
        args = tuple(from_dlpack(to_dlpack_func(arg)) if isinstance(arg, tensor_type) else arg
                     for arg in args)
        return rvm_func(*args)

    return _wrapper


def to_pytorch_func(rvm_func):
    """``rvm_func`` (a PackedFunc or a Module, called with its entry function) taking
    ``torch.Tensor`` arguments, which it reads and writes in place."""
    import torch
    import torch.utils.dlpack

    return convert_func(rvm_func, torch.Tensor, torch.utils.dlpack.to_dlpack)
