"""Programs and checks shared by the schedule tests.

``check_schedule`` is the standard check of a scheduled module: it is well
formed, prints as script that parses back structurally equal, replays from
its trace (printed, JSON) to the same module, and computes what the
unscheduled module computes on random inputs (compiled C).
"""
import json

import numpy as np

import rvm
from rvm.ir import assert_structural_equal
from rvm.script import from_source
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.analysis import verify_well_formed
from rvm.tir.schedule import Schedule, Trace


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@I.ir_module
class MatmulRelu:
    @T.prim_func
    def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
             D: T.Buffer((32, 32), "float32")):
        T.func_attr({"tir.noalias": True})
        C = T.alloc_buffer((32, 32))
        for i, j, k in T.grid(32, 32, 32):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(32, 32):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@I.ir_module
class Elementwise:
    @T.prim_func
    def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((16, 24), "float32")):
        B = T.alloc_buffer((16, 24))
        for i, j in T.grid(16, 24):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(16, 24):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@I.ir_module
class RowSum:
    @T.prim_func
    def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def random_args(func, seed=0):
    """Random float inputs for every parameter buffer of ``func`` (constant shapes)."""
    rng = np.random.default_rng(seed)
    args = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = [int(d) for d in buf.shape]
        args.append(rng.uniform(-1, 1, size=shape).astype(str(buf.dtype)))
    return args


def run(mod, args, target="c"):
    """The parameter arrays after running ``mod["main"]`` on copies of ``args``."""
    out = [a.copy() for a in args]
    rvm.build(mod, target=target)["main"](*out)
    return out


def check_numeric(before, after, seed=0):
    """``after`` computes what ``before`` computes (compiled C, random inputs)."""
    func = before["main"] if isinstance(before, rvm.ir.IRModule) else before
    args = random_args(func, seed)
    for want, got in zip(run(before, args), run(after, args)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def check_replay(sch, before):
    """The trace of ``sch`` replays (as objects, printed Python and JSON) to ``sch.mod``."""
    again = Schedule(before)
    sch.trace.apply_to_schedule(again, remove_postproc=False)
    assert_structural_equal(again.mod, sch.mod)
    printed = Schedule(before)
    namespace = {"tir": rvm.tir}
    exec(str(sch.trace), namespace)
    namespace["apply_trace"](printed)
    assert_structural_equal(printed.mod, sch.mod)
    from_json = Schedule(before)
    Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), from_json)
    assert_structural_equal(from_json.mod, sch.mod)


def check_schedule(sch, before, expected=None, numeric=True):
    """Every check of the module docstring; ``expected`` (a module) must equal ``sch.mod``."""
    mod = sch.mod
    verify_well_formed(mod)
    if expected is not None:
        assert_structural_equal(mod, expected)
    assert_structural_equal(from_source(mod.script()), mod)
    check_replay(sch, before)
    if numeric:
        check_numeric(before, mod)
