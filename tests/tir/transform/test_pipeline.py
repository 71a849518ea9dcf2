"""The lowering pipeline, and prim_func_pass."""
import pytest

from rvm import te
from rvm.ir.module import IRModule
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.stmt_functor import post_order_visit
from rvm.ir.transform import PassContext
from rvm.tir.transform.pipeline import lower_module, lower_tir_pipeline
from rvm.tir.transform.prim_func_pass import prim_func_pass


def _node_types(func):
    seen = set()
    post_order_visit(func.body, lambda n: seen.add(type(n)))
    return seen


def _matmul():
    A = te.placeholder((8, 4), name="A")
    B = te.placeholder((4, 6), name="B")
    k = te.reduce_axis((0, 4), name="k")
    C = te.compute((8, 6), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_lowered_functions_have_no_blocks_and_flat_buffers():
    lowered = lower_module(_matmul())["main"]
    types = _node_types(lowered)
    assert not types & {S.Block, S.BlockRealize}
    loads = []
    post_order_visit(lowered.body, lambda n: loads.append(n) if isinstance(n, E.BufferLoad)
                     else None)
    assert loads and all(len(ld.indices) == 1 for ld in loads)


def test_localize_reduction_can_be_disabled():
    with PassContext(disabled_pass=["LocalizeReduction"]):
        lowered = lower_module(_matmul())["main"]
    assert S.IfThenElse in _node_types(lowered)  # the guarded init
    assert S.IfThenElse not in _node_types(lower_module(_matmul())["main"])


def test_pipeline_names_its_passes():
    names = [p.info.name for p in lower_tir_pipeline().passes]
    assert names == ["LocalizeReduction", "LowerInitBlock", "LowerOpaqueBlock",
                     "PlanAndUpdateBufferAllocationLocation", "CompactBufferAllocation",
                     "HoistAccumulatorTile", "UnrollLoop", "FlattenBuffer", "Simplify",
                     "LowerIntrin"]


def test_prim_func_pass_checks_results_and_keeps_unchanged_modules():
    mod = IRModule({"main": _matmul()})
    assert prim_func_pass(lambda f, m, c: f, "Same")(mod) is mod
    with pytest.raises(TypeError, match="expected a PrimFunc"):
        prim_func_pass(lambda f, m, c: None, "Broken")(mod)
    with pytest.raises(TypeError, match="IRModule or a PrimFunc"):
        lower_module("main")
