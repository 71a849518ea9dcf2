"""A kernel with very many intermediates (one Allocate + DeclBuffer per intermediate,
nested in one another after LowerOpaqueBlock): PlanAndUpdateBufferAllocationLocation,
CompactBufferAllocation and HoistAccumulatorTile walk the chain without recursion (no
RecursionError) and collect accesses in one walk per chain, and still move, shrink and
keep allocations as for a short chain."""
import time

from rvm import te
from rvm.ir.module import IRModule
from rvm.te.create_prim_func import create_prim_func
from rvm.tir.stmt import Allocate, DeclBuffer, For
from rvm.tir.transform import (
    CompactBufferAllocation, HoistAccumulatorTile, LowerInitBlock, LowerOpaqueBlock,
    PlanAndUpdateBufferAllocationLocation,
)

STAGES = 400


def _chain(stages):
    """B_k = B_{k-1} + 1 over a 4x8 tensor; each B_k for k < stages is an intermediate."""
    a = te.placeholder((4, 8), name="A")
    out = a
    for k in range(stages):
        out = _stage(out, k)
    lowered = LowerOpaqueBlock()(LowerInitBlock()(IRModule({"main": create_prim_func([a, out])})))
    return lowered


def _stage(prev, k):
    return te.compute((4, 8), lambda i, j: prev[i, j] + 1.0, name=f"B{k}")


def _allocations(func):
    """The allocations of the chain at the root of ``func`` (followed without recursion)."""
    found, node = [], func.body
    while isinstance(node, (Allocate, DeclBuffer)):
        if isinstance(node, Allocate):
            found.append(node)
        node = node.body
    return found


def test_a_long_chain_of_allocations_is_planned_compacted_and_hoisted():
    mod = _chain(STAGES)
    assert len(_allocations(mod["main"])) == STAGES - 1
    start = time.perf_counter()
    planned = PlanAndUpdateBufferAllocationLocation()(mod)
    compacted = CompactBufferAllocation()(planned)
    hoisted = HoistAccumulatorTile()(compacted)
    elapsed = time.perf_counter() - start
    allocs = _allocations(hoisted["main"])
    assert len(allocs) == STAGES - 1
    # each intermediate is written and read in separate loop nests: it stays at the root
    assert isinstance(planned["main"].body, Allocate)
    assert elapsed < 60, f"{elapsed:.1f}s for {STAGES} intermediates"


def test_an_allocation_of_the_chain_moves_into_its_loop():
    """B0 is written and read under the same outer loop when the stages are fused per row;
    here: one stage per row of a loop, so the inner chain moves into it."""
    a = te.placeholder((4, 8), name="A")
    b = te.compute((4, 8), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((4, 8), lambda i, j: b[i, j] + 1.0, name="C")
    from rvm.tir.schedule import Schedule

    sch = Schedule(IRModule({"main": create_prim_func([a, c])}))
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    lowered = LowerOpaqueBlock()(LowerInitBlock()(sch.mod))
    planned = PlanAndUpdateBufferAllocationLocation()(lowered)["main"]
    outer = planned.body
    while not isinstance(outer, For):
        outer = outer.body
    assert isinstance(outer.body, Allocate)
    compacted = CompactBufferAllocation()(IRModule({"main": planned}))["main"]
    outer = compacted.body
    while not isinstance(outer, For):
        outer = outer.body
    (alloc,) = _allocations(outer)
    assert [int(e.value) for e in alloc.extents] == [1, 8]
