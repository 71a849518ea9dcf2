"""The metadata section of printed modules: constants too large to show inline.

``script(show_meta=True)`` ends the text with an assignment

    metadata = {"relax.expr.Constant": [{"dtype": "float32", "shape": [2, 3],
                                         "data": "<base64 of the bytes>"}, ...]}

that the parser reads back for ``metadata["relax.expr.Constant"][i]``; arrays held by
function attributes (an importer's ``params``) are ``metadata["runtime.NDArray"][i]``.
"""
import ast
import base64

import numpy as np

from rvm.runtime.data_type import DataType
from rvm.runtime.ndarray import array

CONSTANT_KEY = "relax.expr.Constant"
NDARRAY_KEY = "runtime.NDArray"


def encode_array(arr):
    """The metadata entry of a numpy array (little-endian bytes in base64)."""
    arr = np.asarray(arr, order="C")  # ascontiguousarray would make a 0-d array 1-d
    little = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    return {"dtype": str(DataType(arr.dtype)), "shape": list(arr.shape),
            "data": base64.b64encode(little.tobytes()).decode("ascii")}


def decode_array(entry):
    """The NDArray of a metadata entry."""
    dtype = np.dtype(DataType(entry["dtype"]).numpy_dtype).newbyteorder("<")
    data = np.frombuffer(base64.b64decode(entry["data"]), dtype=dtype)
    arr = data.reshape(tuple(entry["shape"])).astype(dtype.newbyteorder("="))
    return array(arr)


def read_metadata(source, tree):
    """The metadata dict of a module-level ``metadata = {...}`` assignment (None without one)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id == "metadata":
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                raise source.error(node.value, "the metadata section must be a literal dict of "
                                               "lists of {dtype, shape, data} entries") from None
            if not isinstance(table, dict):
                raise source.error(node.value, "the metadata section must be a dict")
            return table
    return None
