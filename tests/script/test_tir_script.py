"""TIR script: parsing prim_funcs, printing them back, and reading the printed text again."""
import pytest

from rvm.ir import assert_structural_equal
from rvm.script import ParseError, from_source
from rvm.script import tir as T
from rvm.tir import expr as _e
from rvm.tir import stmt as _s

LINEAR0 = '''
@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    m, n, k = T.int64(), T.int64(), T.int64()
    X = T.match_buffer(x, (1, m), "float32")
    W = T.match_buffer(w, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    Z = T.match_buffer(z, (1, n), "float32")
    Y = T.alloc_buffer((1, n), "float32")
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, n):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]
'''

LINEAR0_PRINTED = '''# from rvm.script import tir as T

@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    m = T.int64()
    X = T.match_buffer(x, (1, m))
    n = T.int64()
    W = T.match_buffer(w, (n, m))
    B = T.match_buffer(b, (n,))
    Z = T.match_buffer(z, (1, n))
    # with T.block("root"):
    Y = T.alloc_buffer((1, n))
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(X[vi, vk], W[vj, vk])
            T.writes(Y[vi, vj])
            with T.init():
                Y[vi, vj] = T.float32(0.0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, n):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y[vi, vj], B[vj])
            T.writes(Z[vi, vj])
            Z[vi, vj] = Y[vi, vj] + B[vj]'''


def test_linear0_parses_into_blocks_with_inferred_regions():
    f = from_source(LINEAR0)
    assert f.attrs["global_symbol"] == "linear0"
    assert [p.dtype for p in f.params] == ["handle"] * 4
    root = f.body.block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["Y"]
    loop = root.body.seq[0]
    assert isinstance(loop, _s.For) and loop.loop_var.dtype == "int32"
    realize = loop.body.body.body
    block = realize.block
    assert [iv.iter_type for iv in block.iter_vars] == [0, 0, 2]
    assert [r.buffer.name for r in block.reads] == ["X", "W"]
    assert [w.buffer.name for w in block.writes] == ["Y"]
    assert block.init is not None


def test_linear0_prints_like_the_seed():
    assert from_source(LINEAR0).script() == LINEAR0_PRINTED


def test_printed_linear0_reads_back_equal():
    f = from_source(LINEAR0)
    assert_structural_equal(from_source(f.script()), f)


def test_decorated_prim_func_with_closure_constant():
    size = 8

    @T.prim_func
    def scale(A: T.Buffer((size,), "float32"), B: T.Buffer((size,), "float32")):
        for i in T.parallel(size):
            with T.block("B"):
                vi = T.axis.spatial(size, i)
                B[vi] = T.if_then_else(A[vi] > T.float32(0), A[vi] * T.float32(2), T.exp(A[vi]))

    assert scale.attrs["global_symbol"] == "scale"
    loop = scale.body.block.body
    assert loop.kind == _s.ForKind.PARALLEL and loop.extent.value == 8
    value = loop.body.block.body.value
    assert isinstance(value, _e.Call) and value.op == "tir.if_then_else"
    assert_structural_equal(from_source(scale.script()), scale)


def test_statement_forms_round_trip():
    f = from_source('''
@T.prim_func(private=True)
def kernel(a: T.handle, n: T.int32):
    T.func_attr({"tir.noalias": True, "note": "x"})
    A = T.match_buffer(a, (n, 16), "float16", scope="global")
    for i in T.serial(2, n):
        for j in T.vectorized(16):
            if i % 2 == 0 and j < 8:
                A[i, j] = T.Cast("float16", T.max(i // 2, j))
            else:
                A[i, j] = T.float16(1)
    for t in T.unroll(4, annotations={"pragma": 1}):
        x = t * 2 + 1
        T.evaluate(T.call_packed("env.log", A, x))
    while n < 4:
        T.evaluate(0)
''')
    assert "global_symbol" not in f.attrs and f.attrs["note"] == "x"
    text = f.script()
    assert "@T.prim_func(private=True)" in text
    assert "for i in T.serial(2, n):" in text
    assert_structural_equal(from_source(text), f)


def test_where_and_explicit_regions_round_trip():
    f = from_source('''
@T.prim_func
def tiled(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i0, k in T.grid(4, 16):
        for i1 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(16, i0 * 4 + i1)
                vk = T.axis.reduce(16, k)
                T.where(i0 * 4 + i1 < 15)
                T.reads(A[vi, 0:16])
                T.writes(B[vi])
                T.block_attr({"meta": 3})
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
''')
    block = f.body.block.body.body.body.body.block
    assert block.reads[0].region[1].extent.value == 16
    assert_structural_equal(from_source(f.script()), f)


def test_parse_error_points_at_the_line():
    with pytest.raises(ParseError) as info:
        from_source(LINEAR0.replace('"SSR"', '"SSX"'))
    err = info.value
    assert err.line == 12 and "bad axis kind 'X'" in str(err)
    assert 'T.axis.remap("SSX"' in str(err) and "^" in str(err)


def _single_store(text):
    f = from_source(text)
    body = f.body
    while not isinstance(body, _s.BufferStore):
        body = body.body
    return f, body


def test_expression_forms_and_dtypes():
    f, store = _single_store('''
@T.prim_func
def e(A: T.Buffer((8,), "int64"), n: T.int32, x: T.float32):
    for i in range(8):
        A[i] = T.Cast("int64", T.truncmod(n, 3) + T.Select(i < n, i // 2, i % 4)) + T.int64(1)
''')
    value = store.value
    assert isinstance(value, _e.Add) and value.dtype == "int64"
    cast = value.a
    assert isinstance(cast, _e.Cast) and isinstance(cast.value.a, _e.Mod)
    select = cast.value.b
    assert isinstance(select.condition, _e.LT)
    assert isinstance(select.true_value, _e.FloorDiv) and isinstance(select.false_value,
                                                                     _e.FloorMod)
    assert_structural_equal(from_source(f.script()), f)


def test_python_numbers_take_the_other_operands_dtype():
    _, store = _single_store('''
@T.prim_func
def e(A: T.Buffer((8,), "float16")):
    for i in range(8):
        A[i] = A[i] * 2 + 0.5
''')
    assert store.value.dtype == "float16"
    assert store.value.b.dtype == "float16" and store.value.b.value == 0.5


def test_integer_true_division_is_rejected():
    with pytest.raises(ParseError, match="'/' on integers is ambiguous"):
        from_source('''
@T.prim_func
def e(A: T.Buffer((8,), "int32")):
    for i in range(8):
        A[i] = i / 2
''')


def test_dependent_loops_are_not_collapsed_into_a_grid():
    f = from_source('''
@T.prim_func
def tri(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i):
            A[i, j] = T.float32(0)
''')
    text = f.script()
    assert "for i in range(8):" in text and "for j in range(i):" in text
    assert_structural_equal(from_source(text), f)


def test_single_nodes_print_as_script():
    f = from_source(LINEAR0)
    loop = f.body.block.body.seq[1]
    text = loop.script()
    assert text.splitlines()[:2] == ["n = T.int64()", "for i, j in T.grid(1, n):"]
    assert 'with T.block("Z"):' in text
    buf = f.buffer_map[f.params[0]]
    assert buf.script() == 'T.Buffer((1, m), "float32")'
    assert (buf.shape[1] * 2).script() == "m * T.int64(2)"


def test_t_namespace_intrinsics_work_on_expressions():
    x = _e.Var("x", "float32")
    assert T.exp(x).op == "tir.exp"
    assert isinstance(T.max(x, T.float32(0)), _e.Max)
    assert T.int64(3).dtype == "int64"


def test_variables_inside_a_dimension_are_declared_before_the_buffer():
    """GPT-2's flattened rows: the first buffer's dimension is ``s72 * s70`` (no buffer
    defines the variables by itself), so they are declared before that buffer's line."""
    f = from_source('''
@T.prim_func
def rows(a: T.handle, b: T.handle):
    s72 = T.int64()
    s70 = T.int64()
    A = T.match_buffer(a, (s72 * s70, 128))
    B = T.match_buffer(b, (s72, s70, 128))
    for i, j, k in T.grid(s72, s70, 128):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi * s70 + vj, vk]
''')
    text = f.script()
    assert text.index("s72 = T.int64()") < text.index("T.match_buffer(a, (s72 * s70")
    assert_structural_equal(from_source(text), f)


def test_an_assert_above_the_root_block_round_trips():
    """A check on the arguments above the root block (not inside it) prints as an assert
    followed by ``with T.block("root")`` and reads back as that assert, not wrapped in a
    second, implicit root block."""
    f = from_source('''
@T.prim_func
def copy(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
''')
    n = f.buffer_map[f.params[0]].shape[0]
    checked = f.with_body(_s.AssertStmt(n > 0, _e.StringImm("n must be positive"), f.body))
    back = from_source(checked.script())
    assert isinstance(back.body, _s.AssertStmt)
    assert_structural_equal(back, checked)


def _bound_twice():
    """One variable bound by two LetStmts one after the other (as unrolled copies of a
    loop body bind it), and two variables of the same name in sibling loops."""
    from rvm.tir.buffer import decl_buffer
    from rvm.tir.function import PrimFunc

    A = decl_buffer((4,), "int32", name="A")
    a, x = _e.Var("a", "handle"), _e.Var("x", "int32")
    store = [_s.LetStmt(x, _e.IntImm("int32", k), _s.BufferStore(A, x + k, [_e.IntImm(
        "int32", k)])) for k in (1, 2)]
    loops = []
    for k in (0, 1):
        i, y = _e.Var("i", "int32"), _e.Var("y", "int32")
        loops.append(_s.For(i, _e.IntImm("int32", 0), _e.IntImm("int32", 2), _s.ForKind.SERIAL,
                            _s.LetStmt(y, i + k, _s.BufferStore(A, y, [i]))))
    return PrimFunc([a], _s.SeqStmt(store + loops), buffer_map={a: A})


def test_a_variable_bound_twice_keeps_its_name_through_save_json():
    from rvm.ir import load_json, save_json

    f = _bound_twice()
    text = f.script()
    assert "x_1" not in text and "y_1" in text  # one x; the sibling loops' two y differ
    assert_structural_equal(load_json(save_json(f)), f)
