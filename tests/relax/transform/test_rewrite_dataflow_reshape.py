"""RewriteDataflowReshape: a call_tir of a reshape-only kernel inside a dataflow block becomes
R.reshape (a view); fused reshapes, other copies, block outputs and bindings outside dataflow
blocks are left as they are."""
from rvm.ir.base import assert_structural_equal
from rvm.relax.transform import LegalizeOps, RewriteDataflowReshape
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T


@I.ir_module
class Before:
    @T.prim_func(private=True)
    def reshape(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
                T_reshape: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32")):
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.block("T_reshape"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T_reshape[v0, v1, v2] = x[
                    (v0 * T.int64(12) + v1 * T.int64(3) + v2) // T.int64(3),
                    (v0 * T.int64(12) + v1 * T.int64(3) + v2) % T.int64(3)]

    @T.prim_func(private=True)
    def exp(x: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32"),
            y: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32")):
        for i, j, k in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.block("y"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                y[vi, vj, vk] = T.exp(x[vi, vj, vk])

    @R.function
    def main(x: R.Tensor((8, 3), "float32")):
        cls = Before
        with R.dataflow():
            y = R.call_tir(cls.reshape, (x,), out_sinfo=R.Tensor((2, 4, 3), "float32"))
            z = R.call_tir(cls.exp, (y,), out_sinfo=R.Tensor((2, 4, 3), "float32"))
            R.output(z)
        return z


@I.ir_module
class Expected:
    @T.prim_func(private=True)
    def reshape(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
                T_reshape: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32")):
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.block("T_reshape"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T_reshape[v0, v1, v2] = x[
                    (v0 * T.int64(12) + v1 * T.int64(3) + v2) // T.int64(3),
                    (v0 * T.int64(12) + v1 * T.int64(3) + v2) % T.int64(3)]

    @T.prim_func(private=True)
    def exp(x: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32"),
            y: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32")):
        for i, j, k in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.block("y"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                y[vi, vj, vk] = T.exp(x[vi, vj, vk])

    @R.function
    def main(x: R.Tensor((8, 3), "float32")):
        cls = Expected
        with R.dataflow():
            y = R.reshape(x, R.shape([2, 4, 3]))
            z = R.call_tir(cls.exp, (y,), out_sinfo=R.Tensor((2, 4, 3), "float32"))
            R.output(z)
        return z


def test_a_reshape_kernel_call_becomes_a_reshape():
    assert_structural_equal(RewriteDataflowReshape()(Before), Expected)


@I.ir_module
class Outputs:
    @T.prim_func(private=True)
    def reshape(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
                T_reshape: T.Buffer((T.int64(24),), "float32")):
        for ax0 in range(T.int64(24)):
            with T.block("T_reshape"):
                v0 = T.axis.spatial(T.int64(24), ax0)
                T_reshape[v0] = x[v0 // T.int64(3), v0 % T.int64(3)]

    @R.function
    def main(x: R.Tensor((8, 3), "float32")):
        cls = Outputs
        with R.dataflow():
            y = R.call_tir(cls.reshape, (x,), out_sinfo=R.Tensor((24,), "float32"))
            R.output(y)
        z = R.call_tir(cls.reshape, (x,), out_sinfo=R.Tensor((24,), "float32"))
        return (y, z)


def test_block_outputs_and_bindings_outside_dataflow_blocks_are_left():
    assert RewriteDataflowReshape()(Outputs) is Outputs


@I.ir_module
class NotReshapes:
    @T.prim_func(private=True)
    def fused_exp_reshape(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
                          out: T.Buffer((T.int64(24),), "float32")):
        for ax0 in range(T.int64(24)):
            with T.block("out"):
                v0 = T.axis.spatial(T.int64(24), ax0)
                out[v0] = T.exp(x[v0 // T.int64(3), v0 % T.int64(3)])

    @T.prim_func(private=True)
    def transpose(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
                  out: T.Buffer((T.int64(3), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(3), T.int64(8)):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = x[vj, vi]

    @T.prim_func(private=True)
    def head(x: T.Buffer((T.int64(8), T.int64(3)), "float32"),
             out: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        for i, j in T.grid(T.int64(2), T.int64(3)):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = x[vi, vj]

    @R.function
    def main(x: R.Tensor((8, 3), "float32")):
        cls = NotReshapes
        with R.dataflow():
            a = R.call_tir(cls.fused_exp_reshape, (x,), out_sinfo=R.Tensor((24,), "float32"))
            b = R.call_tir(cls.transpose, (x,), out_sinfo=R.Tensor((3, 8), "float32"))
            c = R.call_tir(cls.head, (x,), out_sinfo=R.Tensor((2, 3), "float32"))
            d = (a, b, c)
            R.output(d)
        return d


def test_a_fused_reshape_a_transpose_and_a_partial_copy_are_left():
    assert RewriteDataflowReshape()(NotReshapes) is NotReshapes


@I.ir_module
class Symbolic:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), y: R.Tensor(("m",), "float32")):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            a = R.reshape(x, R.shape([n * 2, 2]))
            b = R.reshape(y, R.shape([n, 4]))  # counts not provably equal: checked kernel
            c = R.add(a, a)
            d = R.add(b, b)
            out = (c, d)
            R.output(out)
        return out


def test_symbolic_shapes():
    """``(n, 4) -> (n * 2, 2)`` becomes a view; ``(m,) -> (n, 4)``, whose element counts
    only a run-time check can compare, stays the kernel that checks them."""
    legal = LegalizeOps()(Symbolic)
    after = RewriteDataflowReshape()(legal)
    main = after["main"].body.blocks[0].bindings
    a, b = main[0].value, main[1].value
    assert a.op.name == "relax.reshape" and a.args[0] is after["main"].params[0]
    assert [str(d) for d in a.args[1].values] == ["n * T.int64(2)", "T.int64(2)"]
    assert b.op.name == "relax.call_tir"
    assert_structural_equal(after["main"].body.blocks[0].bindings[2:],
                            legal["main"].body.blocks[0].bindings[2:])


@I.ir_module
class TupleInput:
    @T.prim_func(private=True)
    def fused_get_reshape(x0: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                          x1: T.Buffer((T.int64(3), T.int64(2)), "float32"),
                          out: T.Buffer((T.int64(6),), "float32")):
        for ax0 in range(T.int64(6)):
            with T.block("out"):
                v0 = T.axis.spatial(T.int64(6), ax0)
                out[v0] = x1[v0 // T.int64(2), v0 % T.int64(2)]

    @R.function
    def main(x0: R.Tensor((2, 3), "float32"), x1: R.Tensor((3, 2), "float32")):
        cls = TupleInput
        with R.dataflow():
            y = R.call_tir(cls.fused_get_reshape, (x0, x1), out_sinfo=R.Tensor((6,), "float32"))
            z = R.add(y, y)
            R.output(z)
        return z


def test_the_view_is_of_the_one_argument_the_kernel_reads():
    after = RewriteDataflowReshape()(TupleInput)
    view = after["main"].body.blocks[0].bindings[0].value
    assert view.op.name == "relax.reshape"
    assert view.args[0] is after["main"].params[1]
