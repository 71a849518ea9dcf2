"""The TIR lowering pipeline: TensorIR PrimFuncs -> flat loop nests the backends emit.

Both kernel backends (C source and the python reference) run exactly this
pipeline, so they execute the same lowered program.
"""
from rvm.ir.module import IRModule
from rvm.tir.function import PrimFunc
from rvm.ir.transform import Sequential
from rvm.tir.transform.compact_buffer_allocation import CompactBufferAllocation
from rvm.tir.transform.flatten_buffer import FlattenBuffer
from rvm.tir.transform.hoist_accumulator_tile import HoistAccumulatorTile
from rvm.tir.transform.localize_reduction import LocalizeReduction
from rvm.tir.transform.lower_init_block import LowerInitBlock
from rvm.tir.transform.lower_intrin import LowerIntrin
from rvm.tir.transform.lower_opaque_block import LowerOpaqueBlock
from rvm.tir.transform.plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from rvm.tir.transform.simplify import Simplify
from rvm.tir.transform.unroll_loop import UnrollLoop


def lower_tir_pipeline():
    """The passes, in order: a Sequential named "LowerTIR".

    LocalizeReduction has opt_level 1: disable it (``PassContext(disabled_pass=
    ["LocalizeReduction"])``) to lower every init as a guarded statement.
    """
    return Sequential([LocalizeReduction(), LowerInitBlock(), LowerOpaqueBlock(),
                       PlanAndUpdateBufferAllocationLocation(), CompactBufferAllocation(),
                       HoistAccumulatorTile(), UnrollLoop(), FlattenBuffer(), Simplify(),
                       LowerIntrin()],
                      name="LowerTIR")


def lower_module(mod):
    """``mod`` (an IRModule or a PrimFunc) with every PrimFunc lowered; an IRModule."""
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"lowering expects an IRModule or a PrimFunc, got {type(mod).__name__}")
    return lower_tir_pipeline()(mod)
