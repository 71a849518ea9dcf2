"""FuseTIR: each primitive Relax function becomes one kernel, called with call_tir."""
import numpy as np

import rvm
from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.fuse_ops import FuseOps
from rvm.relax.transform.fuse_tir import FuseTIR
from rvm.ir.transform import PassContext


@I.ir_module
class Chain:
    @T.prim_func(private=True)
    def add(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"),
            z: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("z"):
                vi = T.axis.spatial(8, i)
                z[vi] = x[vi] + y[vi]

    @T.prim_func(private=True)
    def exp(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = T.exp(x[vi])

    @R.function(private=True)
    def fused_add_exp_exp(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        R.func_attr({"Primitive": True})
        cls = Chain
        with R.dataflow():
            a = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((8,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((8,), "float32"))
            c = R.call_tir(cls.exp, (b,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(c)
        return c

    @R.function
    def main(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        cls = Chain
        with R.dataflow():
            c = cls.fused_add_exp_exp(x, y)
            R.output(c)
        return c


@I.ir_module
class ChainFused:
    @T.prim_func(private=True)
    def fused_add_exp_exp(x: T.Buffer((T.int64(8),), "float32"),
                          y: T.Buffer((T.int64(8),), "float32"),
                          out: T.Buffer((T.int64(8),), "float32")):
        T.func_attr({"tir.noalias": True})
        z = T.alloc_buffer((T.int64(8),))
        y_1 = T.alloc_buffer((T.int64(8),))
        for i in range(8):
            with T.block("z"):
                vi = T.axis.spatial(8, i)
                z[vi] = x[vi] + y[vi]
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y_1[vi] = T.exp(z[vi])
        for i in range(8):
            with T.block("y_1"):
                vi = T.axis.spatial(8, i)
                out[vi] = T.exp(y_1[vi])

    @R.function
    def main(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        cls = ChainFused
        with R.dataflow():
            c = R.call_tir(cls.fused_add_exp_exp, (x, y), out_sinfo=R.Tensor((8,), "float32"))
            R.output(c)
        return c


def test_a_chain_becomes_one_kernel_with_unique_block_names():
    assert_structural_equal(FuseTIR()(Chain), ChainFused)


@I.ir_module
class Dense:
    @T.prim_func(private=True)
    def dense(x: T.handle, w: T.Buffer((T.int64(4), T.int64(8)), "float32"), y: T.handle):
        T.func_attr({"op_pattern": 4})
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(8)))
        Y = T.match_buffer(y, (n, T.int64(4)))
        for i, j, k in T.grid(n, T.int64(4), T.int64(8)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * w[vj, vk]

    @T.prim_func(private=True)
    def bias_relu(x: T.handle, b: T.Buffer((T.int64(4),), "float32"), y: T.handle):
        T.func_attr({"op_pattern": 0})
        m = T.int64()
        X = T.match_buffer(x, (m, T.int64(4)))
        Y = T.match_buffer(y, (m, T.int64(4)))
        for i, j in T.grid(m, T.int64(4)):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj] + b[vj], T.float32(0))

    @R.function(private=True)
    def fused_dense_bias_relu(x: R.Tensor(("n", 8), "float32"), w: R.Tensor((4, 8), "float32"),
                              b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        n = T.int64()
        cls = Dense
        with R.dataflow():
            lv = R.call_tir(cls.dense, (x, w), out_sinfo=R.Tensor((n, 4), "float32"))
            gv = R.call_tir(cls.bias_relu, (lv, b), out_sinfo=R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor(("batch", 8), "float32"), w: R.Tensor((4, 8), "float32"),
             b: R.Tensor((4,), "float32")):
        batch = T.int64()
        cls = Dense
        with R.dataflow():
            gv = cls.fused_dense_bias_relu(x, w, b)
            R.output(gv)
        return gv


@I.ir_module
class DenseFused:
    @T.prim_func(private=True)
    def fused_dense_bias_relu(x: T.handle, w: T.Buffer((T.int64(4), T.int64(8)), "float32"),
                              b: T.Buffer((T.int64(4),), "float32"), y: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(8)))
        Y = T.match_buffer(y, (n, T.int64(4)))
        lv = T.alloc_buffer((n, T.int64(4)))
        for i, j, k in T.grid(n, T.int64(4), T.int64(8)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    lv[vi, vj] = T.float32(0)
                lv[vi, vj] = lv[vi, vj] + X[vi, vk] * w[vj, vk]
        for i, j in T.grid(n, T.int64(4)):
            with T.block("Y_1"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(lv[vi, vj] + b[vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("batch", 8), "float32"), w: R.Tensor((4, 8), "float32"),
             b: R.Tensor((4,), "float32")):
        batch = T.int64()
        cls = DenseFused
        with R.dataflow():
            gv = R.call_tir(cls.fused_dense_bias_relu, (x, w, b),
                            out_sinfo=R.Tensor((batch, 4), "float32"))
            R.output(gv)
        return gv


def test_symbolic_dimensions_are_matched_between_the_kernels():
    assert_structural_equal(FuseTIR()(Dense), DenseFused)


def test_the_fused_kernel_computes_what_the_kernels_did():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 8)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    vm = relax.VirtualMachine(relax.build(FuseTIR()(Dense)), rvm.cpu())
    for batch in (1, 3):
        x = rng.standard_normal((batch, 8)).astype("float32")
        np.testing.assert_allclose(vm["main"](x, w, b).numpy(),
                                   np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-5)


@I.ir_module
class Pair:
    @T.prim_func(private=True)
    def halves(x: T.Buffer((8,), "float32"), lo: T.Buffer((4,), "float32"),
               hi: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 2})
        for i in range(4):
            with T.block("lo"):
                vi = T.axis.spatial(4, i)
                lo[vi] = x[vi]
        for i in range(4):
            with T.block("hi"):
                vi = T.axis.spatial(4, i)
                hi[vi] = x[vi + 4]

    @T.prim_func(private=True)
    def scale(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(4):
            with T.block("y"):
                vi = T.axis.spatial(4, i)
                y[vi] = x[vi] * T.float32(2)

    @R.function(private=True)
    def fused_halves_scale(x: R.Tensor((8,), "float32")):
        R.func_attr({"Primitive": True})
        cls = Pair
        with R.dataflow():
            t = R.call_tir(cls.halves, (x,), out_sinfo=[R.Tensor((4,), "float32"),
                                                        R.Tensor((4,), "float32")])
            lo = t[0]
            hi = t[1]
            s = R.call_tir(cls.scale, (hi,), out_sinfo=R.Tensor((4,), "float32"))
            r = (lo, s)
            R.output(r)
        return r

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Pair
        with R.dataflow():
            r = cls.fused_halves_scale(x)
            lo = r[0]
            s = r[1]
            R.output(lo, s)
        return (s, lo)


def test_tuples_inside_and_several_results():
    after = FuseTIR()(Pair)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["fused_halves_scale", "main"]
    kernel = after["fused_halves_scale"]
    assert [p.name_hint for p in kernel.params] == ["x", "lo", "y"]
    x = np.arange(8, dtype="float32")
    s, lo = relax.VirtualMachine(relax.build(after), rvm.cpu())["main"](x)
    np.testing.assert_array_equal(lo.numpy(), x[:4])
    np.testing.assert_array_equal(s.numpy(), 2 * x[4:])


@I.ir_module
class Fixed:
    @T.prim_func(private=True)
    def exp(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = T.exp(x[vi])

    @R.function(private=True)
    def fused_exp_exp(x: R.Tensor(("n",), "float32")):
        R.func_attr({"Primitive": True})
        n = T.int64()
        cls = Fixed
        with R.dataflow():
            a = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(b)
        return b

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        cls = Fixed
        with R.dataflow():
            b = cls.fused_exp_exp(x)
            R.output(b)
        return b


def test_a_kernel_of_fixed_size_called_on_a_symbolic_one_is_not_fused():
    after = FuseTIR()(Fixed)
    assert after["fused_exp_exp"].attrs is None  # an ordinary function now, still correct
    vm = relax.VirtualMachine(relax.build(after), rvm.cpu())
    np.testing.assert_allclose(vm["main"](np.zeros(8, "float32")).numpy(), np.ones(8) * np.e,
                               rtol=1e-6)


def test_symbolic_values_only_in_tir_vars_reach_the_fused_kernel():
    from rvm import tir
    from rvm.relax.block_builder import BlockBuilder
    from rvm.relax.expr import ShapeExpr, Var
    from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo
    from rvm.te.operation import compute

    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = Var("x", TensorStructInfo((n,), "float32"))
    s = Var("s", ShapeStructInfo([m]))

    def fill(x, shape):
        return compute((shape[0],), lambda i: x[0] + 1.0, name="fill")

    def double(y):
        return compute(y.shape, lambda i: y[i] * 2.0, name="double")

    bb = BlockBuilder()
    with bb.function("main", [x, s]):
        with bb.dataflow():
            y = bb.emit_te(fill, x, ShapeExpr([m]))
            z = bb.emit_output(bb.call_te(double, y))
        bb.emit_func_output(z)
    mod = bb.get()
    lowered = rvm.transform.Sequential([relax.transform.AnnotateTIROpPattern(), FuseOps(),
                                        FuseTIR()])(mod)
    kernel = lowered["fused_fill_double"]
    assert [p.name_hint for p in kernel.params][-1] == "m"
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    out = vm["main"](np.full(3, 4.0, "float32"), rvm.runtime.ShapeTuple([5]))
    np.testing.assert_array_equal(out.numpy(), np.full(5, 10.0, "float32"))


def test_nothing_to_fuse_returns_the_module():
    assert FuseTIR()(ChainFused) is ChainFused
    with PassContext(opt_level=0):
        assert FuseTIR()(ChainFused) is ChainFused
