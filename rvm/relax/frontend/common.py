"""What every importer shares: taking the weights off an imported module.

>>> import numpy as np
>>> from rvm.ir.module import IRModule
>>> from rvm.relax.binding import SeqExpr
>>> from rvm.relax.expr import Var
>>> from rvm.relax.function import Function
>>> from rvm.relax.struct_info import TensorStructInfo
>>> from rvm.runtime.ndarray import array
>>> x = Var("x", TensorStructInfo((2,), "float32"))
>>> w = Var("w", TensorStructInfo((2,), "float32"))
>>> main = Function([x, w], SeqExpr([], x), attrs={"num_input": 1,
...                                                "params": [array(np.ones(2, "float32"))]})
>>> mod, params = detach_params(IRModule({"main": main}))
>>> mod["main"].attrs, [tuple(p.shape) for p in params["main"]]
({'num_input': 1}, [(2,)])
"""
from rvm.ir.module import IRModule
from rvm.runtime.ndarray import NDArray

__all__ = ["detach_params"]


def detach_params(mod):
    """``(module, params)``: ``mod`` without its functions' ``params`` attributes (set by an
    importer with ``keep_params_as_input=True``), and those arrays by function name
    (``params["main"]``, in the order of ``main``'s trailing parameters)."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"detach_params expects an IRModule, got {type(mod).__name__}")
    detached = IRModule({}, mod.attrs)
    params = {}
    for gv, func in mod.functions.items():
        values = func.get_attr("params") if hasattr(func, "get_attr") else None
        if values is None:
            detached.add(gv, func)
            continue
        values = list(values)
        if not all(isinstance(v, NDArray) for v in values):
            raise ValueError(f"detach_params: the 'params' attribute of '{gv.name_hint}' must "
                             f"be a list of NDArrays, got {[type(v).__name__ for v in values]}")
        params[gv.name_hint] = values
        detached.add(gv, func.without_attr("params"))
    return detached, params
