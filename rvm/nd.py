"""rvm.nd: tensors (a facade over rvm.runtime.ndarray); ``Function``, TVM's old name of
PackedFunc, is here too, as in TVM."""
from rvm.runtime.ndarray import NDArray, array, empty, from_dlpack
from rvm.runtime.packed_func import PackedFunc as Function

__all__ = ["Function", "NDArray", "array", "empty", "from_dlpack"]
