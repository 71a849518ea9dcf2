"""relax.build on modules made other ways: BlockBuilder + emit_te, and high-level operators."""
import numpy as np
import pytest

import rvm
from rvm import te
from rvm.driver.relax_build import build
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import ir as I, relax as R, tir as T
from rvm.vm.machine import VirtualMachine


def te_matmul(A, B):
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((A.shape[0], B.shape[1]), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k),
                      name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda i, j: te.max(A[i, j], 0), name="relu")


@pytest.mark.parametrize("target", ["c", "python"])
def test_block_builder_with_emit_te(target):
    A = Var("A", TensorStructInfo((16, 16), "float32"))
    B = Var("B", TensorStructInfo((16, 16), "float32"))
    bb = BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            out = bb.emit_output(D)
        bb.emit_func_output(out, params=[A, B])
    ex = build(bb.get(), target=target)
    rng = np.random.default_rng(0)
    a, b = rng.random((16, 16), dtype=np.float32), rng.random((16, 16), dtype=np.float32) - 0.5
    out = VirtualMachine(ex, rvm.cpu())["main"](a, b)
    np.testing.assert_allclose(out.numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


@I.ir_module
class HighLevel:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            z = R.add(x, y)
            w = R.nn.relu(z)
            s = R.nn.softmax(w)
            R.output(s)
        return s


def test_high_level_operators_are_legalized_and_run():
    vm = VirtualMachine(build(HighLevel), rvm.cpu())
    rng = np.random.default_rng(1)
    y = rng.random(4, dtype=np.float32) - 0.5
    for n in (1, 5):
        x = rng.random((n, 4), dtype=np.float32) - 0.5
        e = np.exp(np.maximum(x + y, 0))
        np.testing.assert_allclose(vm["main"](x, y).numpy(), e / e.sum(-1, keepdims=True),
                                   rtol=1e-5, atol=1e-6)


@I.ir_module
class TwoOutputs:
    @T.prim_func
    def split2(x: T.handle, a: T.handle, b: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.serial(n):
            with T.block("AB"):
                vi = T.axis.remap("S", [i])
                A[vi] = X[vi] + T.float32(1)
                B[vi] = X[vi] * T.float32(2)

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = TwoOutputs
        with R.dataflow():
            t = R.call_tir(cls.split2, (x,),
                           out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")])
            a = t[0]
            b = t[1]
            R.output(a, b)
        return (b, a)


def test_kernel_with_two_outputs():
    ex = build(TwoOutputs)
    x = np.arange(5, dtype="float32")
    b, a = VirtualMachine(ex, rvm.cpu())["main"](x)
    np.testing.assert_array_equal(a.numpy(), x + 1)
    np.testing.assert_array_equal(b.numpy(), 2 * x)
    info = ex.function_info("main")
    kernel_pc = next(pc for pc in range(info.start, info.end)
                     if ex.func_table[ex.instructions[pc].fields[1]].name == "split2")
    assert ex.source_of(kernel_pc) == ("main", "t")
