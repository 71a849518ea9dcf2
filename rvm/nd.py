"""rvm.nd: tensors (a facade over rvm.runtime.ndarray)."""
from rvm.runtime.ndarray import NDArray, array, empty, from_dlpack

__all__ = ["NDArray", "array", "empty", "from_dlpack"]
