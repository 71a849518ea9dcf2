"""SplitLayoutRewritePreproc: a bound weight the default schedule packs into panels is packed
once at build (the executable's constant holds the panels, the kernel reads them and packs
nothing); a weight passed at run time keeps its packing inside the kernel."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.driver.relax_build import lower
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform import SplitLayoutRewritePreproc
from rvm.script import tir as T
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import Block
from rvm.tir.stmt_functor import post_order_visit

op = relax.op
REWRITE = "meta_schedule.layout_rewrite_preproc"


def _dense(rows, weights, bound=True):
    """main(x) = relu(x @ w0) @ w1 ..., each w a bound constant (or a parameter)."""
    bb = relax.BlockBuilder()
    x = Var("x", TensorStructInfo((rows, weights[0].shape[0]), "float32"))
    ws = [relax.const(w) if bound else Var(f"w{k}", TensorStructInfo(w.shape, "float32"))
          for k, w in enumerate(weights)]
    with bb.function("main", [x] + ([] if bound else ws)):
        with bb.dataflow():
            h = x
            for w in ws:
                h = bb.emit(op.nn.relu(op.matmul(h, w)))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def _blocks(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Block) else None)
    return found


def _kernels(mod):
    return [f for gv, f in mod.functions.items()
            if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func")]


def _run(ex, *args):
    return relax.VirtualMachine(ex, rvm.cpu())["main"](*args).numpy()


def _weights(*shapes):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype("float32") for s in shapes]


@pytest.mark.parametrize("rows", [1, 64])
def test_a_bound_weight_is_packed_once_at_build(rows):
    # 128 columns: 2 panels of 64 for one row, 4 of 32 under the 8 x 2-register tile
    [w] = _weights((256, 128))
    mod = _dense(rows, [w])
    [kernel] = _kernels(lower(mod))
    assert not any(b.annotations.get(REWRITE) for b in _blocks(kernel))  # no packing per call
    assert [tuple(int(d) for d in b.shape) for b in kernel.buffer_map.values()][1] \
        == (128 // 32 if rows == 64 else 2, 256, 32 if rows == 64 else 64)
    ex = relax.build(mod)
    shapes = [tuple(c.shape) for c in ex.constants if hasattr(c, "numpy")]
    assert shapes == [(4, 256, 32) if rows == 64 else (2, 256, 64)]  # the panels, not w
    x = np.random.default_rng(1).standard_normal((rows, 256)).astype("float32")
    np.testing.assert_allclose(_run(ex, x), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def test_packed_panels_hold_the_weight_in_panel_order():
    [w] = _weights((8, 128))
    ex = relax.build(_dense(1, [w]))
    [panels] = [c.numpy() for c in ex.constants if hasattr(c, "numpy")]
    # panels[p, k, c] = w[k, p * 64 + c]: two panels of 64 columns
    np.testing.assert_array_equal(panels, w.reshape(8, 2, 64).transpose(1, 0, 2))


def test_one_kernel_called_with_two_weights_gets_each_packed():
    w0, w1 = _weights((128, 128), (128, 128))
    mod = _dense(64, [w0, w1])
    ex = relax.build(mod)
    assert sorted(tuple(c.shape) for c in ex.constants if hasattr(c, "numpy")) \
        == [(4, 128, 32), (4, 128, 32)]
    x = np.random.default_rng(2).standard_normal((64, 128)).astype("float32")
    expected = np.maximum(np.maximum(x @ w0, 0) @ w1, 0)
    np.testing.assert_allclose(_run(ex, x), expected, rtol=1e-4, atol=1e-4)


def test_a_weight_passed_at_run_time_is_packed_inside_the_kernel():
    [w] = _weights((256, 128))
    mod = _dense(64, [w], bound=False)
    [kernel] = _kernels(lower(mod))
    assert any(b.annotations.get(REWRITE) for b in _blocks(kernel))
    x = np.random.default_rng(3).standard_normal((64, 256)).astype("float32")
    out = _run(relax.build(mod), x, w)
    np.testing.assert_allclose(out, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def _call(kernel, weight=None):
    """main(x) calling ``kernel`` with x and a constant (marked layout-free)."""
    bb = relax.BlockBuilder()
    x = Var("x", TensorStructInfo((4, 4), "float32"))
    weight = np.ones((4, 4), "float32") if weight is None else weight
    with bb.function("main", [x]):
        gv = bb.add_func(kernel.with_attr("layout_free_buffers", [1]), "k")
        out = bb.emit(relax.call_tir(gv, [x, relax.const(weight)],
                                     TensorStructInfo((4, 4), "float32")))
        bb.emit_func_output(out)
    return bb.get()


@T.prim_func
def transposed(x: T.Buffer((4, 4), "float32"), w: T.Buffer((4, 4), "float32"),
               y: T.Buffer((4, 4), "float32")):
    wt = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("wt"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
            wt[vj, vi] = w[vi, vj]
    for i, j in T.grid(4, 4):
        with T.block("y"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = x[vi, vj] + wt[vi, vj]


def test_a_marked_copy_becomes_the_kernel_parameter_and_the_constant_is_copied():
    w = np.arange(16, dtype="float32").reshape(4, 4)
    folded = SplitLayoutRewritePreproc()(_call(transposed, w))
    kernel = folded["k"]
    assert [p.name_hint for p in kernel.params] == ["x", "wt", "y"]
    assert not kernel.body.block.alloc_buffers and len(_blocks(kernel)) == 2  # root and y
    const = folded["main"].body.blocks[0].bindings[0].value.args[1].fields[1]
    np.testing.assert_array_equal(const.data.numpy(), w.T)
    x = np.ones((4, 4), "float32")
    np.testing.assert_array_equal(_run(relax.build(folded), x), x + w.T)


def test_a_marked_nest_that_is_not_a_plain_copy_stays_in_its_kernel():
    @T.prim_func
    def scaled(x: T.Buffer((4, 4), "float32"), w: T.Buffer((4, 4), "float32"),
               y: T.Buffer((4, 4), "float32")):
        w2 = T.alloc_buffer((4, 4))
        for i, j in T.grid(4, 4):
            with T.block("w2"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                w2[vi, vj] = w[vi, vj] * T.float32(2)
        for i, j in T.grid(4, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + w2[vi, vj]

    mod = _call(scaled)
    assert SplitLayoutRewritePreproc()(mod) is mod


def test_a_weight_also_read_outside_its_copy_stays_in_its_kernel():
    @T.prim_func
    def twice(x: T.Buffer((4, 4), "float32"), w: T.Buffer((4, 4), "float32"),
              y: T.Buffer((4, 4), "float32")):
        wt = T.alloc_buffer((4, 4))
        for i, j in T.grid(4, 4):
            with T.block("wt"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                wt[vj, vi] = w[vi, vj]
        for i, j in T.grid(4, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + wt[vi, vj] + w[vi, vj]

    mod = _call(twice)
    assert SplitLayoutRewritePreproc()(mod) is mod


def test_a_copy_that_misses_elements_stays_in_its_kernel():
    @T.prim_func
    def partial(x: T.Buffer((4, 4), "float32"), w: T.Buffer((4, 4), "float32"),
                y: T.Buffer((4, 4), "float32")):
        wt = T.alloc_buffer((4, 4))
        for i, j in T.grid(4, 4):
            with T.block("wt"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                wt[vi, vj // 2] = w[vi, vj]  # two writes per element, half left unwritten
        for i, j in T.grid(4, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + wt[vi, vj]

    mod = _call(partial)
    assert SplitLayoutRewritePreproc()(mod) is mod


def test_a_weight_that_is_one_panel_keeps_its_layout():
    # 64 columns fit one panel: packing would copy the weight into the layout it has
    [w] = _weights((32, 64))
    ex = relax.build(_dense(8, [w]))
    assert [tuple(c.shape) for c in ex.constants if hasattr(c, "numpy")] == [(32, 64)]


def test_a_copy_out_of_bounds_stays_in_its_kernel():
    @T.prim_func
    def shifted(x: T.Buffer((4, 4), "float32"), w: T.Buffer((4, 4), "float32"),
                y: T.Buffer((4, 4), "float32")):
        wt = T.alloc_buffer((4, 4))
        for i, j in T.grid(4, 4):
            with T.block("wt"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.block_attr({"meta_schedule.layout_rewrite_preproc": 1})
                wt[vi, (vj + 3) % 4] = w[vi, vj - 1]  # w[.., -1]: numpy would wrap it
        for i, j in T.grid(4, 4):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + wt[vi, vj]

    mod = _call(shifted)
    assert SplitLayoutRewritePreproc()(mod) is mod


def test_a_weight_larger_than_one_index_grid_is_packed_in_slices(monkeypatch):
    from rvm.relax.transform import split_layout_rewrite_preproc as split

    monkeypatch.setattr(split, "GRID_LIMIT", 100)  # 8 x 128 = 1024 elements: 16 slices
    [w] = _weights((8, 128))
    ex = relax.build(_dense(1, [w]))
    [panels] = [c.numpy() for c in ex.constants if hasattr(c, "numpy")]
    np.testing.assert_array_equal(panels, w.reshape(8, 2, 64).transpose(1, 0, 2))
