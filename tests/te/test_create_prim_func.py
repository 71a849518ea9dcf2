import pytest

from rvm import te, tir
from rvm.ir.base import assert_structural_equal, structural_equal


def _matmul_relu():
    A = te.placeholder((128, 128), name="A", dtype="float32")
    B = te.placeholder((128, 128), name="B", dtype="float32")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    D = te.compute(C.shape, lambda i, j: te.max(C[i, j], 0), name="relu")
    return A, B, C, D


def _blocks(func):
    found = []
    tir.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block)
                         else None)
    return {b.name_hint: b for b in found}


def test_intermediate_becomes_local_buffer():
    A, B, C, D = _matmul_relu()
    f = te.create_prim_func([A, B, D])
    assert [f.buffer_map[p].name for p in f.params] == ["A", "B", "relu"]
    root = f.body.block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["matmul"]
    assert tir.analysis.verify_well_formed(f)


def test_intermediate_in_args_is_a_parameter():
    A, B, C, D = _matmul_relu()
    f = te.create_prim_func([A, B, C, D])
    assert [f.buffer_map[p].name for p in f.params] == ["A", "B", "matmul", "relu"]
    assert f.body.block.alloc_buffers == ()


def test_reduction_block_structure():
    A, B, C, D = _matmul_relu()
    blocks = _blocks(te.create_prim_func([A, B, C]))
    mm = blocks["matmul"]
    assert [iv.iter_type for iv in mm.iter_vars] == [tir.IterVar.DataPar] * 2 + \
        [tir.IterVar.CommReduce]
    assert [iv.var.name_hint for iv in mm.iter_vars] == ["v_i", "v_j", "v_k"]
    assert [r.buffer.name for r in mm.reads] == ["A", "B"]
    assert [w.buffer.name for w in mm.writes] == ["matmul"]
    assert isinstance(mm.init, tir.BufferStore) and mm.init.value.value == 0.0
    assert isinstance(mm.body.value, tir.Add)
    assert mm.body.value.a.buffer is mm.writes[0].buffer


def test_loop_nest_and_bindings():
    A, B, C, D = _matmul_relu()
    f = te.create_prim_func([A, B, C])
    loop = f.body.block.body
    names = []
    while isinstance(loop, tir.For):
        names.append((loop.loop_var.name_hint, loop.extent.value, loop.kind))
        loop = loop.body
    assert names == [("i", 128, tir.ForKind.SERIAL), ("j", 128, tir.ForKind.SERIAL),
                     ("k", 128, tir.ForKind.SERIAL)]
    assert isinstance(loop, tir.BlockRealize) and len(loop.iter_values) == 3


def test_same_program_twice_is_structurally_equal():
    A, B, _, D = _matmul_relu()
    f1 = te.create_prim_func([A, B, D])
    A, B, _, D = _matmul_relu()
    f2 = te.create_prim_func([A, B, D])
    assert_structural_equal(f1, f2)
    f3 = te.create_prim_func(list(_matmul_relu()))
    assert not structural_equal(f1, f3)


def test_placeholder_must_be_an_argument():
    A, B, C, D = _matmul_relu()
    with pytest.raises(ValueError, match="placeholder 'B'"):
        te.create_prim_func([A, D])


def test_symbolic_shapes():
    n = tir.Var("n", "int64")
    X = te.placeholder((1, n), name="X")
    Y = te.compute(X.shape, lambda i, j: te.max(X[i, j], 0), name="Y")
    f = te.create_prim_func([X, Y])
    assert f.buffer_map[f.params[0]].shape[1] is n
    assert tir.analysis.verify_well_formed(f)
    assert tir.analysis.undefined_vars(f) == []


def test_extern_block_reads_and_writes_whole_buffers():
    A = te.placeholder((4, 2), name="A")
    C = te.extern(A.shape, [A], lambda ins, outs: tir.call_packed("env.f", ins[0], outs[0]),
                  name="C")
    f = te.create_prim_func([A, C])
    blk = _blocks(f)["C"]
    a_buf, c_buf = (f.buffer_map[p] for p in f.params)
    call = blk.body.value
    assert call.args[1] is a_buf and call.args[2] is c_buf
    assert blk.reads[0].buffer is a_buf and blk.reads[0].region[0].extent.value == 4
    assert blk.writes[0].buffer is c_buf
    assert tir.analysis.verify_well_formed(f)


def test_reduction_where_condition_guards_update():
    A = te.placeholder((8,), name="A")
    k = te.reduce_axis((0, 8), name="k")
    S = te.compute((1,), lambda i: te.sum(A[k], axis=k, where=k < 4), name="S")
    blk = _blocks(te.create_prim_func([A, S]))["S"]
    assert isinstance(blk.body, tir.IfThenElse)


def test_attrs():
    A, B, C, D = _matmul_relu()
    f = te.create_prim_func([A, B, D])
    assert f.attrs == {"global_symbol": "main", "tir.noalias": True}


def test_matmul_relu_computes_the_right_values():
    import numpy as np
    from tests.tir.evaluator import run
    A = te.placeholder((3, 4), name="A")
    B = te.placeholder((4, 2), name="B")
    k = te.reduce_axis((0, 4), name="k")
    C = te.compute((3, 2), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    D = te.compute(C.shape, lambda i, j: te.max(C[i, j], 0), name="relu")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal((4, 2)).astype("float32")
    d = np.zeros((3, 2), "float32")
    run(te.create_prim_func([A, B, D]), a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-5)


def test_symbolic_function_runs_for_any_size():
    import numpy as np
    from tests.tir.evaluator import run
    n = tir.Var("n", "int64")
    X = te.placeholder((n,), name="X")
    Y = te.compute(X.shape, lambda i: X[i] * 2.0 + 1.0, name="Y")
    f = te.create_prim_func([X, Y])
    for size in (1, 5):
        x = np.arange(size, dtype="float32")
        y = np.zeros(size, "float32")
        run(f, x, y)
        np.testing.assert_allclose(y, x * 2 + 1)


def test_layout_free_buffers_attr():
    x = te.placeholder((2, 3), name="x")
    w = te.placeholder((4, 3), name="w")
    k = te.reduce_axis((0, 3), name="k")
    y = te.compute((2, 4), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), name="y",
                   attrs={"layout_free_placeholders": [w]})
    assert te.create_prim_func([x, w, y]).attrs["layout_free_buffers"] == [1]


def _module(a_name="A", dtype="float32", n=128):
    from rvm.ir.module import IRModule
    A = te.placeholder((n, n), name=a_name, dtype=dtype)
    B = te.placeholder((n, n), name="B", dtype=dtype)
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda x, y: te.sum(A[x, k] * B[k, y], axis=k), name="matmul")
    D = te.compute(C.shape, lambda i, j: te.max(C[i, j], 0), name="relu")
    return IRModule({"main": te.create_prim_func([A, B, D])})


def test_modules_from_te_alpha_renamed_equal_and_mismatches_located():
    assert_structural_equal(_module(), _module(a_name="X"))
    with pytest.raises(ValueError) as info:
        assert_structural_equal(_module(), _module(dtype="float16"))
    assert '<root>.functions[I.GlobalVar("main")].buffer_map[A].dtype' in str(info.value)
    with pytest.raises(ValueError, match=r"shape\[0\]\.value"):
        assert_structural_equal(_module(), _module(n=64))
