"""rvm.tir.transform: passes lowering TensorIR to flat loop nests.

This package is a facade; the definitions live in its modules.
"""
from rvm.tir.transform.compact_buffer_allocation import (
    CompactBufferAllocation, compact_buffer_allocation,
)
from rvm.tir.transform.flatten_buffer import FlattenBuffer, flatten_buffer
from rvm.tir.transform.hoist_accumulator_tile import HoistAccumulatorTile, hoist_accumulator_tile
from rvm.tir.transform.localize_reduction import LocalizeReduction, localize_reduction
from rvm.tir.transform.lower_init_block import LowerInitBlock, lower_init_block
from rvm.tir.transform.lower_intrin import LowerIntrin, lower_intrin
from rvm.tir.transform.lower_opaque_block import LowerOpaqueBlock, lower_opaque_block
from rvm.tir.transform.pipeline import lower_module, lower_tir_pipeline
from rvm.tir.transform.plan_buffer_allocation import (
    PlanAndUpdateBufferAllocationLocation, plan_buffer_allocation,
)
from rvm.tir.transform.prim_func_pass import prim_func_pass
from rvm.tir.transform.simplify import Simplify, simplify_prim_func
from rvm.tir.transform.unroll_loop import UnrollLoop, unroll_loop

__all__ = [
    "CompactBufferAllocation", "FlattenBuffer", "HoistAccumulatorTile", "LocalizeReduction",
    "LowerInitBlock", "LowerIntrin", "LowerOpaqueBlock", "PlanAndUpdateBufferAllocationLocation",
    "Simplify", "UnrollLoop", "compact_buffer_allocation", "flatten_buffer",
    "hoist_accumulator_tile", "localize_reduction", "lower_init_block", "lower_intrin",
    "lower_module", "lower_opaque_block", "lower_tir_pipeline", "plan_buffer_allocation",
    "prim_func_pass", "simplify_prim_func", "unroll_loop",
]
