"""Kernels nested deeper than Python's default recursion limit: a fused chain of hundreds of
operators lowers to an Allocate and a DeclBuffer per intermediate around the rest of the
body, and every pass, the codegen and create_prim_func must handle it."""
import sys
import threading

import numpy as np

import rvm
from rvm import te
from rvm.driver.build_module import build as build_kernels
from rvm.driver.relax_build import build
from rvm.relax import op as relax_op
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.support.recursion import DEPTH, deep_recursion
from rvm.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from rvm.relax.transform.fuse_ops import FuseOps
from rvm.relax.transform.fuse_tir import FuseTIR
from rvm.relax.transform.legalize_ops import LegalizeOps
from rvm.vm.machine import VirtualMachine

CHAIN = 300


def plus_one(src):
    return lambda i: src[i] + 1.0


def test_te_chain_of_hundreds_of_computes_builds_and_runs():
    A = te.placeholder((8,), name="A")
    t = A
    for k in range(CHAIN):
        t = te.compute((8,), plus_one(t), name=f"T{k}")
    limit = sys.getrecursionlimit()
    lib = build_kernels(rvm.IRModule({"main": te.create_prim_func([A, t])}), target="c")
    assert sys.getrecursionlimit() == limit
    a = rvm.nd.array(np.arange(8, dtype="float32"))
    out = rvm.nd.array(np.zeros(8, "float32"))
    lib["main"](a, out)
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype="float32") + CHAIN)


def test_relax_chain_fused_into_one_deep_kernel_runs():
    x = Var("x", TensorStructInfo((4, 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", params=[x]):
        with bb.dataflow():
            y = x
            for _ in range(110):
                y = bb.emit(relax_op.multiply(relax_op.add(y, x), rvm.relax.const(0.5)))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    fused = FuseTIR()(FuseOps()(AnnotateTIROpPattern()(LegalizeOps()(bb.get()))))
    kernels = [f for f in fused.functions.values() if isinstance(f, rvm.tir.PrimFunc)]
    blocks = sorted(f.script().count("T.block(") for f in kernels)
    assert blocks == [221]  # one kernel: the root block and one per operator (220)
    xs = np.random.default_rng(0).random((4, 4), dtype=np.float32)
    expected = xs.copy()
    for _ in range(110):
        expected = (expected + xs) * np.float32(0.5)
    got = VirtualMachine(build(fused), rvm.cpu())["main"](xs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_recursion_room_is_given_back_by_the_last_holder_on_any_thread():
    limit = sys.getrecursionlimit()
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with deep_recursion():
            entered.set()
            leave.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    entered.wait(10)
    with deep_recursion():
        assert sys.getrecursionlimit() >= DEPTH
    assert sys.getrecursionlimit() >= DEPTH  # the other thread still walks a deep tree
    leave.set()
    other.join()
    assert sys.getrecursionlimit() == limit
