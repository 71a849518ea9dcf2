"""SPEC §7 / seed 004 §5.1-§5.2 as written (``tvm`` replaced by ``rvm``): a fixed split with
``sch.mod.script()``, ``stochastic_schedule_mm`` with ``print(sch.trace)``, and
``random_search`` timing each candidate with ``lib.time_evaluator``."""
import re

import numpy as np

import rvm
from rvm.script import tir as T


@rvm.script.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"),
             B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


Module = MyModule
dtype = "float32"
a_np = np.random.default_rng(0).random((128, 128)).astype(dtype)
b_np = np.random.default_rng(1).random((128, 128)).astype(dtype)
c_mm = a_np @ b_np
a_nd = rvm.nd.array(a_np)
b_nd = rvm.nd.array(b_np)
c_nd = rvm.nd.empty((128, 128), dtype="float32")


def stochastic_schedule_mm(sch: rvm.tir.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def random_search(mod: rvm.IRModule, num_trials=10):
    best_result = None
    best_sch = None
    for i in range(num_trials):
        sch = stochastic_schedule_mm(rvm.tir.Schedule(mod))
        lib = rvm.build(sch.mod, target="llvm")
        f_timer_after = lib.time_evaluator("main", rvm.cpu())
        result = f_timer_after(a_nd, b_nd, c_nd).mean
        print("==========Attempt %d,time-cost:%.9f ms=======" % (i, result * 1000))
        print(sch.trace)
        if best_result is None or result < best_result:
            best_result = result
            best_sch = sch
    return best_sch


def test_fixed_split_prints_a_script_that_parses_back():
    sch = rvm.tir.Schedule(Module)
    block_c = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block_c)
    j0, j1 = sch.split(j, factors=[None, 4])
    text = sch.mod.script()
    assert "for i, j_0, j_1, k in T.grid(128, 32, 4, 128):" in text
    rvm.ir.assert_structural_equal(rvm.script.from_source(text), sch.mod)
    lib = rvm.build(sch.mod, target="llvm")
    lib["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), c_mm, rtol=1e-5)


def test_stochastic_schedule_prints_its_trace(capsys):
    sch = rvm.tir.Schedule(Module)
    sch = stochastic_schedule_mm(sch)
    sch.mod.script()
    print(sch.trace)
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert lines[:3] == ["# from rvm import tir", "def apply_trace(sch: tir.Schedule) -> None:",
                         '  b0 = sch.get_block(name="C", func_name="main")']
    tile = re.search(r"v4, v5 = sch.sample_perfect_tile\(loop=l2, n=2, max_innermost_factor=16, "
                     r"decision=\[(\d+), (\d+)\]\)", out)
    assert tile and int(tile.group(1)) * int(tile.group(2)) == 128
    assert int(tile.group(2)) <= 16
    assert "  l6, l7 = sch.split(loop=l2, factors=[v4, v5], preserve_unit_iters=True, " \
           "disable_predication=False)" in lines
    assert lines[-2:] == ["  sch.reorder(l1, l6, l3, l7)",
                          "  b8 = sch.decompose_reduction(block=b0, loop=l3)"]


def test_random_search_times_candidates_and_returns_the_best(capsys):
    sch = random_search(MyModule, num_trials=4)
    out = capsys.readouterr().out
    costs = [float(x) for x in re.findall(r"Attempt \d+,time-cost:([0-9.]+) ms", out)]
    assert len(costs) == 4 and all(c > 0 for c in costs)
    assert out.count("def apply_trace(sch: tir.Schedule) -> None:") == 4
    lib = rvm.build(sch.mod, target="llvm")
    lib["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), c_mm, rtol=1e-5)
