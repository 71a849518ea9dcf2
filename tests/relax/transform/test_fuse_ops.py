"""FuseOps: chains of kernel calls become calls of primitive Relax functions."""
import numpy as np
import pytest

from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.fuse_ops import FuseOps
from rvm.ir.transform import PassContext, Sequential

F32 = "float32"
RAMP = np.arange(8, dtype=F32)


@I.ir_module
class Diamond:
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

    @T.prim_func(private=True)
    def relu(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = T.max(x[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        cls = Diamond
        with R.dataflow():
            a = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((8,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((8,), "float32"))
            c = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((8,), "float32"))
            d = R.call_tir(cls.add, (b, c), out_sinfo=R.Tensor((8,), "float32"))
            R.output(d)
        return d


@I.ir_module
class DiamondFused:
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

    @T.prim_func(private=True)
    def relu(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = T.max(x[vi], T.float32(0))

    @R.function(private=True)
    def fused_add_exp_relu_add(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        R.func_attr({"Primitive": True})
        cls = DiamondFused
        with R.dataflow():
            a = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((8,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((8,), "float32"))
            c = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((8,), "float32"))
            d = R.call_tir(cls.add, (b, c), out_sinfo=R.Tensor((8,), "float32"))
            R.output(d)
        return d

    @R.function
    def main(x: R.Tensor((8,), "float32"), y: R.Tensor((8,), "float32")):
        cls = DiamondFused
        with R.dataflow():
            d = cls.fused_add_exp_relu_add(x, y)
            R.output(d)
        return d


def test_a_diamond_of_elementwise_kernels_becomes_one_function():
    assert_structural_equal(FuseOps()(Diamond), DiamondFused)


@I.ir_module
class Dense:
    @T.prim_func(private=True)
    def matmul(x: T.Buffer((2, 4), "float32"), w: T.Buffer((4, 4), "float32"),
               y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 4})
        for i, j, k in T.grid(2, 4, 4):
            with T.block("y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    y[vi, vj] = T.float32(0)
                y[vi, vj] = y[vi, vj] + x[vi, vk] * w[vk, vj]

    @T.prim_func(private=True)
    def bias_add(x: T.Buffer((2, 4), "float32"), b: T.Buffer((4,), "float32"),
                 y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + b[vj]

    @T.prim_func(private=True)
    def relu(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        cls = Dense
        with R.dataflow():
            lv0 = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), "float32"))
            lv1 = R.call_tir(cls.bias_add, (lv0, b), out_sinfo=R.Tensor((2, 4), "float32"))
            lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((2, 4), "float32"))
            lv3 = R.call_tir(cls.matmul, (lv2, w), out_sinfo=R.Tensor((2, 4), "float32"))
            gv = R.call_tir(cls.bias_add, (lv3, b), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(gv)
        return gv


@I.ir_module
class DenseFused:
    @T.prim_func(private=True)
    def matmul(x: T.Buffer((2, 4), "float32"), w: T.Buffer((4, 4), "float32"),
               y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 4})
        for i, j, k in T.grid(2, 4, 4):
            with T.block("y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    y[vi, vj] = T.float32(0)
                y[vi, vj] = y[vi, vj] + x[vi, vk] * w[vk, vj]

    @T.prim_func(private=True)
    def bias_add(x: T.Buffer((2, 4), "float32"), b: T.Buffer((4,), "float32"),
                 y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + b[vj]

    @T.prim_func(private=True)
    def relu(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @R.function(private=True)
    def fused_matmul_bias_add_relu(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32"),
                                   b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        cls = DenseFused
        with R.dataflow():
            lv0 = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), "float32"))
            lv1 = R.call_tir(cls.bias_add, (lv0, b), out_sinfo=R.Tensor((2, 4), "float32"))
            lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(lv2)
        return lv2

    @R.function(private=True)
    def fused_matmul_bias_add(lv2: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32"),
                              b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        cls = DenseFused
        with R.dataflow():
            lv3 = R.call_tir(cls.matmul, (lv2, w), out_sinfo=R.Tensor((2, 4), "float32"))
            gv = R.call_tir(cls.bias_add, (lv3, b), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        cls = DenseFused
        with R.dataflow():
            lv2 = cls.fused_matmul_bias_add_relu(x, w, b)
            gv = cls.fused_matmul_bias_add(lv2, w, b)
            R.output(gv)
        return gv


def test_matmul_takes_its_bias_and_activation_but_not_the_next_matmul():
    assert_structural_equal(FuseOps()(Dense), DenseFused)


@I.ir_module
class Reduce:
    @T.prim_func(private=True)
    def add(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"),
            z: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("z"):
                vi = T.axis.spatial(8, i)
                z[vi] = x[vi] + y[vi]

    @T.prim_func(private=True)
    def total(x: T.Buffer((8,), "float32"), y: T.Buffer((1,), "float32")):
        T.func_attr({"op_pattern": 3})
        for i, k in T.grid(1, 8):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + x[vk]

    @T.prim_func(private=True)
    def twice(x: T.Buffer((1,), "float32"), y: T.Buffer((1,), "float32")):
        T.func_attr({"op_pattern": 0})
        with T.block("y"):
            y[0] = x[0] * T.float32(2)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Reduce
        with R.dataflow():
            a = R.call_tir(cls.add, (x, R.const(RAMP)),
                           out_sinfo=R.Tensor((8,), "float32"))
            b = R.call_tir(cls.total, (a,), out_sinfo=R.Tensor((1,), "float32"))
            c = R.call_tir(cls.twice, (b,), out_sinfo=R.Tensor((1,), "float32"))
            R.output(c)
        return c


def test_elementwise_joins_a_reduction_and_constants_become_parameters():
    after = FuseOps()(Reduce)
    fused = after["fused_add_total"]
    assert [p.name_hint for p in fused.params] == ["x", "param_0"]
    assert fused.attrs == {"Primitive": True}
    main = after["main"].body.blocks[0].bindings
    assert [getattr(b.value.op, "name_hint", None) for b in main] == ["fused_add_total", None]
    call = main[0].value
    np.testing.assert_array_equal(call.args[1].data.numpy(), np.arange(8, dtype=F32))
    assert main[1].value.args[0].name_hint == "twice"  # a reduction takes no epilogue here


@I.ir_module
class Split:
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
    def add(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32"),
            z: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(4):
            with T.block("z"):
                vi = T.axis.spatial(4, i)
                z[vi] = x[vi] + y[vi]

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Split
        with R.dataflow():
            t = R.call_tir(cls.halves, (x,), out_sinfo=[R.Tensor((4,), "float32"),
                                                        R.Tensor((4,), "float32")])
            lo = t[0]
            hi = t[1]
            s = R.call_tir(cls.add, (lo, hi), out_sinfo=R.Tensor((4,), "float32"))
            R.output(s)
        return s


def test_tuple_results_and_their_items_fuse_with_their_consumer():
    after = FuseOps()(Split)
    assert [gv.name_hint for gv in after.get_global_vars()] == [
        "halves", "add", "main", "fused_halves_add"]
    body = after["fused_halves_add"].body.blocks[0].bindings
    assert [type(b.value).__name__ for b in body] == ["Call", "TupleGetItem", "TupleGetItem",
                                                      "Call"]


@I.ir_module
class Blocked:
    @T.prim_func(private=True)
    def exp(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        T.func_attr({"op_pattern": 0})
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = T.exp(x[vi])

    @T.prim_func(private=True)
    def unknown(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                y[vi] = x[vi]

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Blocked
        with R.dataflow():
            a = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((8,), "float32"))
            b = R.call_tir(cls.unknown, (a,), out_sinfo=R.Tensor((8,), "float32"))
            c = R.call_tir(cls.exp, (b,), out_sinfo=R.Tensor((8,), "float32"))
            m = R.match_cast(c, R.Tensor((8,), "float32"))
            d = R.call_tir(cls.exp, (c,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(d, m)
        gv = R.call_tir(cls.exp, (d,), out_sinfo=R.Tensor((8,), "float32"))
        e = R.call_tir(cls.exp, (gv,), out_sinfo=R.Tensor((8,), "float32"))
        return (e, m)


def test_kernels_without_a_pattern_match_casts_and_plain_blocks_stop_fusion():
    # unknown has no op_pattern (opaque); c is also read by a match_cast; gv and e are
    # outside any dataflow block
    assert FuseOps()(Blocked) is Blocked


def test_fusion_follows_the_opt_level():
    assert FuseOps(fuse_opt_level=0)(Diamond) is Diamond
    with PassContext(opt_level=0):
        assert Sequential([FuseOps()])(Diamond) is Diamond
    with PassContext(opt_level=1):
        assert_structural_equal(Sequential([FuseOps()])(Diamond), DiamondFused)


def test_max_depth_bounds_a_group():
    with PassContext(config={"relax.FuseOps.max_depth": 2}):
        after = FuseOps()(Diamond)
    groups = [gv.name_hint for gv in after.get_global_vars() if gv.name_hint.startswith("fused")]
    assert groups and all(len(after[g].body.blocks[0].bindings) <= 2 for g in groups)


@pytest.mark.parametrize("module", [Diamond, Dense, Reduce, Split])
def test_fused_modules_compute_what_the_originals_do(module):
    import rvm
    from rvm import relax

    rng = np.random.default_rng(0)
    params = module["main"].params
    args = [rng.standard_normal([int(d) for d in p.struct_info_.shape_values]).astype("float32")
            for p in params]
    fused = relax.VirtualMachine(relax.build(module), rvm.cpu())["main"](*args).numpy()
    with PassContext(opt_level=0):
        plain = relax.VirtualMachine(relax.build(module), rvm.cpu())["main"](*args).numpy()
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-5)
