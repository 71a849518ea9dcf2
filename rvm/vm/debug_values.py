"""What a debugger shows of a VM value: tensor statistics, tuples, shapes, closures.

``describe(value)`` is a plain dict (comparable between engines, printable);
``format_value`` its one-line text; ``nonfinite_count`` how many NaN/Inf a
tensor holds (0 for anything else).
"""
import numpy as np

from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.ndarray import NDArray
from rvm.vm.closure import VMClosure


def _numpy(value):
    if isinstance(value, NDArray):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    return None


def nonfinite_count(value):
    """The number of NaN or Inf elements of a tensor (0 for a non-float or non-tensor)."""
    data = _numpy(value)
    if data is None or data.dtype.kind not in "fc":
        return 0
    return int(data.size - np.count_nonzero(np.isfinite(data)))


def tensor_stats(data):
    """shape, dtype, min, max, mean (over the finite elements), NaN and Inf counts."""
    stats = {"kind": "tensor", "shape": tuple(int(d) for d in data.shape),
             "dtype": str(data.dtype)}
    if data.dtype.kind in "biuf" and data.size:
        numeric = data.astype(np.float64)
        finite = numeric[np.isfinite(numeric)]
        stats["min"] = float(finite.min()) if finite.size else None
        stats["max"] = float(finite.max()) if finite.size else None
        stats["mean"] = float(finite.mean()) if finite.size else None
        stats["nan"] = int(np.isnan(numeric).sum())
        stats["inf"] = int(np.isinf(numeric).sum())
    return stats


def describe(value):
    """A plain dict describing ``value``: its kind and what matters of it."""
    data = _numpy(value)
    if data is not None:
        return tensor_stats(data)
    if isinstance(value, ShapeTuple):
        return {"kind": "shape", "value": tuple(int(d) for d in value)}
    if isinstance(value, (Array, tuple, list)):
        return {"kind": "tuple", "items": [describe(v) for v in value]}
    if isinstance(value, VMClosure):
        return {"kind": "closure", "function": value.name, "saved": len(value.saved_args)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"kind": type(value).__name__, "value": value}
    return {"kind": type(value).__name__}  # storage and other handles: no stable text


def format_value(info):
    """One line of text for a ``describe`` dict."""
    kind = info["kind"]
    if kind == "tensor":
        text = f"tensor{list(info['shape'])} {info['dtype']}"
        if "min" in info:
            text += (f" min={_num(info['min'])} max={_num(info['max'])} "
                     f"mean={_num(info['mean'])}")
            if info["nan"] or info["inf"]:
                text += f" nan={info['nan']} inf={info['inf']}"
        return text
    if kind == "shape":
        return f"shape{list(info['value'])}"
    if kind == "tuple":
        return "(" + ", ".join(format_value(i) for i in info["items"]) + ")"
    if kind == "closure":
        return f"closure {info['function']} (saved {info['saved']})"
    return f"{kind} {info['value']!r}" if "value" in info else kind


def _num(x):
    return "-" if x is None else f"{x:.6g}"
