"""TensorIR forms that TVM's printer and TVM's tests write: each parses, prints and parses back
equal, and builds where it is a whole kernel."""
import numpy as np
import pytest

import rvm
from rvm.ir import assert_structural_equal
from rvm.script import ParseError, from_source
from rvm.tir import expr as _e
from rvm.tir import stmt as _s
from rvm.tir.stmt_functor import post_order_visit


def _round_trip(text):
    func = from_source(text)
    again = from_source(func.script())
    assert_structural_equal(again, func)
    return func


def _blocks(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, _s.Block) else None)
    return found


UNNAMED_BLOCK = '''
@T.prim_func
def add_one(x: T.Buffer((T.int64(8), T.int64(8)), "float32"),
            y: T.Buffer((T.int64(8), T.int64(8)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(T.int64(8), T.int64(8)):
        with T.block():
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = x[vi, vj] + 1.0
'''


def test_unnamed_block():
    func = _round_trip(UNNAMED_BLOCK)
    names = [b.name_hint for b in _blocks(func)]
    assert "" in names
    lib = rvm.build(func, target="c")
    x = np.random.rand(8, 8).astype("float32")
    y = rvm.nd.empty((8, 8), "float32")
    lib["add_one"](rvm.nd.array(x), y)
    np.testing.assert_allclose(y.numpy(), x + 1, rtol=1e-6)


def test_block_name_keyword_and_bad_block_arguments():
    text = UNNAMED_BLOCK.replace("T.block()", 'T.block(name_hint="add")')
    assert [b.name_hint for b in _blocks(from_source(text))][0] == "add"
    with pytest.raises(ParseError, match="unexpected argument"):
        from_source(UNNAMED_BLOCK.replace("T.block()", 'T.block("a", tag=1)'))
    with pytest.raises(ParseError, match="the block name, a str"):
        from_source(UNNAMED_BLOCK.replace("T.block()", "T.block(3)"))


SHORT_AXES = '''
@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    A = T.match_buffer(a, [16, 8])
    B = T.match_buffer(b, [16])
    for i, k in T.grid(16, 8):
        with T.block("B"):
            vi = T.axis.S(16, i)
            vk = T.axis.R(8, k)
            with T.init():
                B[vi] = 0.0
            B[vi] += A[vi, vk]
'''


def test_axis_s_r_and_augmented_store():
    func = _round_trip(SHORT_AXES)
    (block,) = [b for b in _blocks(func) if b.name_hint == "B"]
    assert [iv.iter_type for iv in block.iter_vars] == [_e.IterVar.DataPar,
                                                        _e.IterVar.CommReduce]
    store = block.body
    assert isinstance(store, _s.BufferStore) and isinstance(store.value, _e.Add)
    a = np.random.rand(16, 8).astype("float32")
    b = rvm.nd.empty((16,), "float32")
    rvm.build(func, target="c")["row_sum"](rvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a.sum(axis=1), rtol=1e-5)


def test_augmented_assignment_needs_a_buffer_element():
    with pytest.raises(ParseError, match="TIR variables are immutable"):
        from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in range(4):
        i += 1
''')


IMMEDIATES = '''
@T.prim_func
def scale(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.FloatImm("float32", 1.5) + T.Cast("float32", T.IntImm("int32", 2))
'''


def test_imm_and_cast_constructors():
    func = _round_trip(IMMEDIATES)
    (block,) = [b for b in _blocks(func) if b.name_hint == "B"]
    value = block.body.value
    assert isinstance(value.b, _e.Cast) and isinstance(value.b.value, _e.IntImm)
    assert isinstance(value.a.b, _e.FloatImm) and value.a.b.value == 1.5
    with pytest.raises(ParseError, match="T.IntImm expects an integer dtype"):
        from_source(IMMEDIATES.replace('T.IntImm("int32", 2)', 'T.IntImm("float32", 2)'))


def test_var_node_constructors_and_cast():
    func = _round_trip('''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    for i in range(4):
        A[i] = T.Add(T.Mul(i, 2), n) + T.cast(T.FloorMod(i, 3), "int32")
''')
    store = func.body.body
    assert isinstance(store.value.a, _e.Add) and isinstance(store.value.a.a, _e.Mul)
    v = from_source('''
@T.prim_func
def g(A: T.Buffer((4,), "int64")):
    n = T.Var("n", "int64")
    A[0] = T.int64(1)
''')
    assert isinstance(v, rvm.tir.PrimFunc)


@pytest.mark.parametrize("intrinsic", ["erf", "exp", "sqrt", "tanh", "sigmoid", "log"])
def test_intrinsics_take_dtype_keyword(intrinsic):
    text = f'''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.{intrinsic}(A[vi] + T.float32(1), dtype="float32")
'''
    func = _round_trip(text)
    (block,) = [b for b in _blocks(func) if b.name_hint == "B"]
    assert block.body.value.op == f"tir.{intrinsic}"
    with pytest.raises(ParseError, match="disagrees with the result's dtype float32"):
        from_source(text.replace('dtype="float32"', 'dtype="float16"'))


MATCH_BUFFER_FORMS = '''
@T.prim_func
def tiled_copy(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (32, 32), "float32", align=64, offset_factor=1)
    C = T.match_buffer(c, [32, 32], dtype="float32", elem_offset=0, scope="global")
    for i, j in T.grid(2, 2):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            T.writes(C[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
            A0 = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16),
                                offset_factor=1)
            C0 = T.match_buffer(C[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16),
                                offset_factor=1)
            for ii, jj in T.grid(16, 16):
                with T.block("inner"):
                    vii, vjj = T.axis.remap("SS", [ii, jj])
                    C0[vii, vjj] = A0[vii, vjj]
'''


def test_match_buffer_forms():
    func = _round_trip(MATCH_BUFFER_FORMS)
    (copy,) = [b for b in _blocks(func) if b.name_hint == "copy"]
    assert len(copy.match_buffers) == 2
    assert [len(r.region) for r in copy.reads] == [2]
