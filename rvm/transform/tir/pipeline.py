"""The TIR lowering pipeline: TensorIR PrimFuncs -> flat loop nests the backends emit.

Both kernel backends (C source and the python reference) run exactly this
pipeline, so they execute the same lowered program.
"""
from rvm.ir.module import IRModule
from rvm.tir.function import PrimFunc
from rvm.transform.pass_infra import Sequential
from rvm.transform.tir.compact_buffer_allocation import CompactBufferAllocation
from rvm.transform.tir.flatten_buffer import FlattenBuffer
from rvm.transform.tir.hoist_accumulator_tile import HoistAccumulatorTile
from rvm.transform.tir.localize_reduction import LocalizeReduction
from rvm.transform.tir.lower_init_block import LowerInitBlock
from rvm.transform.tir.lower_intrin import LowerIntrin
from rvm.transform.tir.lower_opaque_block import LowerOpaqueBlock
from rvm.transform.tir.plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from rvm.transform.tir.simplify import Simplify
from rvm.transform.tir.unroll_loop import UnrollLoop


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
