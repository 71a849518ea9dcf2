"""AnnotateTIROpPattern: record each kernel's fusion pattern as its ``op_pattern`` attribute.

FuseOps reads the attribute from the PrimFuncs that ``call_tir`` calls; the
value is an ``OpPatternKind`` as an int (0 elementwise ... 4 out-elementwise
fusable, 8 opaque), found by ``rvm.relax.analysis.analyze_op_pattern_kind``. A
kernel that already has the attribute keeps it, so a hand-written kernel can
state its own pattern (or opt out of fusion with 8).

>>> from rvm.ir.module import IRModule
>>> from rvm.te.create_prim_func import create_prim_func
>>> from rvm.te.operation import compute, placeholder
>>> A = placeholder((4,), name="A")
>>> mod = IRModule({"inc": create_prim_func([A, compute((4,), lambda i: A[i] + 1.0)])})
>>> AnnotateTIROpPattern()(mod)["inc"].attrs["op_pattern"]
0
"""
from rvm.relax.analysis.tir_op_pattern import analyze_op_pattern_kind
from rvm.tir.transform.prim_func_pass import prim_func_pass


def annotate_op_pattern(func, mod=None, ctx=None):
    """``func`` with its ``op_pattern`` attribute set (kept when it is already there)."""
    if func.get_attr("op_pattern") is not None:
        return func
    return func.with_attr("op_pattern", int(analyze_op_pattern_kind(func)))


def AnnotateTIROpPattern():  # noqa: N802  (passes are CamelCase factories)
    """A pass annotating every PrimFunc with its fusion pattern (module docstring)."""
    return prim_func_pass(annotate_op_pattern, "AnnotateTIROpPattern")
