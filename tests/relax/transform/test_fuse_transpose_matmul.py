"""FuseTransposeMatmul: matmul(x, permute_dims(w)) reads w in place (one NT matmul kernel)."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir, topi
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.fuse_transpose_matmul import FuseTransposeMatmul
from rvm.tir.function import PrimFunc
from rvm.ir.transform import PassContext


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


def _mlp(form, weights):
    """x (n, 8) -> 6 -> 3 with relu: R.matmul/R.permute_dims/R.add/R.nn.relu, or
    emit_te(topi.nn.dense)/topi.add/topi.nn.relu (seed 004's form); weights bound."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((tir.Var("n", "int64"), 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = x
            for k, (w, b) in enumerate(weights):
                w, b = relax.const(w), relax.const(b)
                if form == "high level":
                    h = bb.emit(relax.op.add(relax.op.matmul(h, relax.op.permute_dims(w)), b))
                    h = bb.emit(relax.op.nn.relu(h)) if k == 0 else h
                else:
                    h = bb.emit_te(topi.add, bb.emit_te(topi.nn.dense, h, w), b)
                    h = bb.emit_te(topi.nn.relu, h) if k == 0 else h
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    kernels = relax.transform.default_build_pipeline()(bb.get())
    return [f for f in kernels.functions.values() if isinstance(f, PrimFunc)
            and not f.get_attr("global_symbol").startswith("shape_func")]


def test_the_high_level_mlp_compiles_to_the_kernels_of_the_emit_te_dense_one():
    # so the two forms run at the same speed (benchmarks/bench_mlp_forms.py measures it)
    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal((m, n)).astype("float32"),
                rng.standard_normal(m).astype("float32")) for n, m in ((8, 6), (6, 3))]
    high, dense = _mlp("high level", weights), _mlp("emit_te", weights)
    assert sorted(f.get_attr("global_symbol") for f in high) == ["fused_NT_matmul1_add1",
                                                                 "fused_NT_matmul_add_relu"]
    assert len(dense) == 2
    for name in ("fused_NT_matmul_add_relu", "fused_NT_matmul1_add1"):
        kernel = next(f for f in high if f.get_attr("global_symbol") == name)
        twin = next(f for f in dense
                    if f.get_attr("global_symbol") == name.replace("NT_matmul", "dense"))
        assert_structural_equal(kernel.with_fields(attrs=twin.attrs), twin)


def test_keep_constant_weights_leaves_a_transposed_constant_to_fold_constant():
    w = np.arange(12, dtype="float32").reshape(3, 4)
    bound = relax.transform.BindParams("main", {"w": rvm.nd.array(w)})(Before)
    assert any(isinstance(f, PrimFunc) for f in FuseTransposeMatmul()(bound).functions.values())
    kept = FuseTransposeMatmul(keep_constant_weights=True)(bound)
    assert not any(isinstance(f, PrimFunc) for f in kept.functions.values())
    # A weight that is a parameter is still read in place.
    assert_structural_equal(FuseTransposeMatmul(keep_constant_weights=True)(Before), Expected)


@I.ir_module
class ScaledKeys:
    """The attention scores of torch's ONNX export: K^T as permute_dims(k, [0, 2, 3, 1])
    (k: batch, tokens, heads, head size), scaled by a one-element tensor."""

    @R.function
    def main(q: R.Tensor((1, 2, 3, 4), "float32"), k: R.Tensor((1, 3, 2, 4), "float32"),
             s: R.Tensor((1,), "float32")):
        with R.dataflow():
            kt = R.permute_dims(k, axes=[0, 2, 3, 1])
            ks = R.multiply(kt, s)
            y = R.matmul(q, ks)
            R.output(y)
        return y


@I.ir_module
class ScaledKeysExpected:
    @T.prim_func(private=True)
    def NT_matmul(q: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(4)), "float32"),
                  k: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(4)), "float32"),
                  T_matmul_NT: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(3)),
                                        "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1, i2, i3, r in T.grid(T.int64(1), T.int64(2), T.int64(3), T.int64(3),
                                        T.int64(4)):
            with T.block("T_matmul_NT"):
                v_i0, v_i1, v_i2, v_i3, v_k = T.axis.remap("SSSSR", [i0, i1, i2, i3, r])
                with T.init():
                    T_matmul_NT[v_i0, v_i1, v_i2, v_i3] = T.float32(0.0)
                T_matmul_NT[v_i0, v_i1, v_i2, v_i3] = T_matmul_NT[v_i0, v_i1, v_i2, v_i3] \
                    + q[v_i0, v_i1, v_i2, v_k] * k[v_i0, v_i1, v_i3, v_k]

    @R.function
    def main(q: R.Tensor((1, 2, 3, 4), "float32"), k: R.Tensor((1, 3, 2, 4), "float32"),
             s: R.Tensor((1,), "float32")):
        cls = ScaledKeysExpected
        with R.dataflow():
            kt = R.permute_dims(k, axes=[0, 2, 3, 1])
            ks = R.multiply(kt, s)
            k_heads = R.permute_dims(k, axes=[0, 2, 1, 3])
            k_scaled = R.multiply(k_heads, s)
            y = R.call_tir(cls.NT_matmul, (q, k_scaled),
                           out_sinfo=R.Tensor((1, 2, 3, 3), "float32"))
            R.output(y)
        return y


def test_scaled_keys_transposed_past_the_heads_become_an_nt_matmul():
    # the copy left keeps the head size innermost; the scale moves before the matmul
    assert_structural_equal(FuseTransposeMatmul()(ScaledKeys), ScaledKeysExpected)


def _scores(axes, k_shape, scale=None, scale_first=False, op="multiply"):
    """matmul(q, [scale op] permute_dims(k, axes)) with q (2, 3, 5, 4)."""
    bb = relax.BlockBuilder()
    q = relax.Var("q", relax.TensorStructInfo((2, 3, 5, 4), "float32"))
    k = relax.Var("k", relax.TensorStructInfo(k_shape, "float32"))
    params = [q, k]
    if scale is not None:
        s = relax.Var("s", relax.TensorStructInfo(scale, "float32"))
        params.append(s)
    with bb.function("main", params):
        with bb.dataflow():
            kt = bb.emit(relax.op.permute_dims(k, axes))
            if scale is not None:
                fn = getattr(relax.op, op)
                kt = bb.emit(fn(s, kt) if scale_first else fn(kt, s))
            out = bb.emit_output(relax.op.matmul(q, kt))
        bb.emit_func_output(out)
    return bb.get()


def _kernel_calls(mod):
    return [b.value.op.name for b in mod["main"].body.blocks[0].bindings]


FORMS = {  # name: (axes, k shape, scale shape, scale first, op, rewritten)
    "swap of the last two": ([0, 1, 3, 2], (2, 3, 6, 4), None, False, "multiply", True),
    "heads moved past the tokens": ([0, 2, 3, 1], (2, 6, 3, 4), None, False, "multiply", True),
    "scaled, scale second": ([0, 2, 3, 1], (2, 6, 3, 4), (1,), False, "multiply", True),
    "scaled, scale first": ([0, 2, 3, 1], (2, 6, 3, 4), (), True, "multiply", True),
    "divided by a scale": ([0, 2, 3, 1], (2, 6, 3, 4), (1, 1, 1, 1), False, "divide", True),
    "a scale divided by the keys": ([0, 2, 3, 1], (2, 6, 3, 4), (1,), True, "divide", True),
    # near misses: the reduction axis is not the innermost one; a scale of many elements; a
    # scale whose broadcast adds an axis; an op that is not a scale
    "reduction along a strided axis": ([0, 2, 1, 3], (2, 4, 3, 6), None, False, "multiply",
                                       False),
    "a per-column scale": ([0, 2, 3, 1], (2, 6, 3, 4), (6,), False, "multiply", False),
    "a scale of higher rank": ([0, 2, 3, 1], (2, 6, 3, 4), (1, 1, 1, 1, 1), False,
                               "multiply", False),
    "an added bias": ([0, 2, 3, 1], (2, 6, 3, 4), (1,), False, "add", False),
}


@pytest.mark.parametrize("form", FORMS)
def test_transposed_operand_forms(form):
    axes, k_shape, scale, scale_first, op, rewritten = FORMS[form]
    before = _scores(axes, k_shape, scale, scale_first, op)
    after = FuseTransposeMatmul()(before)
    assert ("relax.call_tir" in _kernel_calls(after)) == rewritten
    assert ("relax.matmul" in _kernel_calls(after)) != rewritten
    if not rewritten:
        return
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 3, 5, 4)).astype("float32")
    k = rng.standard_normal(k_shape).astype("float32")
    args = [q, k]
    kt = k.transpose(axes)
    if scale is not None:
        s = rng.uniform(0.5, 2.0, scale).astype("float32")
        args.append(s)
        fn = getattr(np, op)
        kt = fn(s, kt) if scale_first else fn(kt, s)
    expected = q @ kt
    vm = relax.VirtualMachine(relax.build(before), rvm.cpu())
    np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-5, atol=1e-5)
