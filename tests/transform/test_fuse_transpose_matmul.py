"""FuseTransposeMatmul: matmul(x, permute_dims(w)) reads w in place (one NT matmul kernel)."""
import numpy as np

import rvm
from rvm import relax
from rvm.ir.structural import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.transform.fuse_transpose_matmul import FuseTransposeMatmul
from rvm.transform.pass_infra import PassContext


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w)
            y = R.matmul(x, wt)
            R.output(y)
        return y


@I.ir_module
class Expected:
    @T.prim_func(private=True)
    def NT_matmul(x: T.Buffer((T.int64(2), T.int64(4)), "float32"),
                  w: T.Buffer((T.int64(3), T.int64(4)), "float32"),
                  T_matmul_NT: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1, k in T.grid(T.int64(2), T.int64(3), T.int64(4)):
            with T.block("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                with T.init():
                    T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + x[v_i0, v_k] * w[v_i1, v_k]

    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((3, 4), "float32")):
        cls = Expected
        with R.dataflow():
            wt = R.permute_dims(w)
            y = R.call_tir(cls.NT_matmul, (x, w), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(y)
        return y


def test_matmul_of_a_transposed_weight_reads_the_weight_in_place():
    assert_structural_equal(FuseTransposeMatmul()(Before), Expected)


@I.ir_module
class Batched:
    @R.function
    def main(x: R.Tensor((2, "s", 4), "float32"), w: R.Tensor((2, 3, 4), "float32"),
             v: R.Tensor((3, 2, 4), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w, axes=[0, 2, 1])
            y = R.matmul(x, wt)
            vt = R.permute_dims(v, axes=[1, 0, 2])
            z = R.matmul(y, vt)
            R.output(z)
        return z


def test_only_a_swap_of_the_last_two_axes_is_fused():
    after = FuseTransposeMatmul()(Batched)
    ops = [b.value.op.name for b in after["main"].body.blocks[0].bindings]
    assert ops == ["relax.permute_dims", "relax.call_tir", "relax.permute_dims", "relax.matmul"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 4)).astype("float32")
    w = rng.standard_normal((2, 3, 4)).astype("float32")
    v = rng.standard_normal((3, 2, 4)).astype("float32")
    vm = relax.VirtualMachine(relax.build(Batched), rvm.cpu())
    expected = (x @ w.transpose(0, 2, 1)) @ v.transpose(1, 0, 2)
    np.testing.assert_allclose(vm["main"](x, w, v).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_at_opt_level_zero_the_build_keeps_the_transpose():
    with PassContext(opt_level=0):
        lowered = relax.transform.default_build_pipeline()(Before)
    assert "NT_matmul" not in lowered
    assert "NT_matmul" in relax.transform.default_build_pipeline()(Before)
