"""Evaluating kernels on constants at compile time (FoldConstant's call_tir evaluator).

The transform layer cannot build kernels, so FoldConstant asks for an
evaluator; this one, registered when the driver or the Relax passes
(``rvm.relax.transform``) are imported, runs the PrimFunc with the python reference target,
which needs no C compiler and is exact by definition.
"""
from rvm.driver.build_module import build
from rvm.ir.module import IRModule
from rvm.runtime.ndarray import empty
from rvm.relax.transform.fold_constant import register_call_tir_evaluator


def evaluate_call_tir(prim_func, args, out_sinfos):
    """Runs ``prim_func`` on constant NDArrays ``args``; returns its outputs (NDArrays).

    >>> import numpy as np
    >>> from rvm import te
    >>> from rvm.relax.struct_info import TensorStructInfo
    >>> from rvm.runtime.ndarray import array
    >>> A = te.placeholder((3,), name="A")
    >>> B = te.compute((3,), lambda i: A[i] + 1.0, name="B")
    >>> out, = evaluate_call_tir(te.create_prim_func([A, B]), [array(np.zeros(3, "float32"))],
    ...                          [TensorStructInfo((3,), "float32")])
    >>> out.numpy().tolist()
    [1.0, 1.0, 1.0]
    """
    outs = [empty(tuple(d.value for d in s.shape_values), s.dtype) for s in out_sinfos]
    kernels = build(IRModule({"main": prim_func.with_attr("global_symbol", "main")}),
                    target="python")
    kernels["main"](*args, *outs)
    return outs


register_call_tir_evaluator(evaluate_call_tir)
