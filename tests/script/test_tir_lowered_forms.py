"""Lowered TIR in script form: what the TIR lowering pipeline makes prints and parses back.

Flattened views of parameter buffers (``A = T.Buffer((16,), data=A.data)``),
data pointers (``A.data``), allocations with a scope, and statements that
bind a name for their body (allocate, decl_buffer, let, assert) followed by
other statements (``with T.allocate(...) as p:``).
"""
from rvm import te
from rvm.ir import assert_structural_equal
from rvm.script import from_source
from rvm.tir import expr as _e
from rvm.tir import stmt as _s
from rvm.tir.buffer import decl_buffer
from rvm.tir.function import PrimFunc
from rvm.tir.transform.pipeline import lower_module


def _round_trip(node):
    text = node.script()
    again = from_source(text)
    assert_structural_equal(again, node)
    assert again.script() == text
    return text


def test_flattened_parameters_are_views_keeping_their_names():
    A = te.placeholder((4, 4), name="A")
    B = te.compute((4, 4), lambda i, j: A[j, i], name="B")
    lowered = lower_module(te.create_prim_func([A, B]))
    text = _round_trip(lowered)
    assert 'A = T.Buffer((16,), "float32", data=A.data)' in text
    assert "B[i * 4 + j] = A[j * 4 + i]" in text


def test_a_view_of_a_buffer_used_whole_gets_a_name_of_its_own():
    A = decl_buffer((2, 3), "float32", "A")
    flat = decl_buffer((6,), "float32", "A", data=A.data)
    body = _s.SeqStmt([_s.Evaluate(_e.Call("int32", "tir.call_packed", [_e.StringImm("f"), A])),
                       _s.BufferStore(flat, _e.FloatImm("float32", 1.0), [_e.IntImm("int32", 0)]),
                       _s.Evaluate(_e.Call("int32", "tir.call_packed",
                                           [_e.StringImm("g"), A.data]))])
    func = PrimFunc([A], body, attrs={"global_symbol": "f"})
    text = _round_trip(func)
    assert 'A_1 = T.Buffer((6,), "float32", data=A.data)' in text
    assert 'T.call_packed("g", A.data)' in text


def test_allocate_keeps_scope_condition_and_annotations():
    text = _round_trip(from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    p = T.allocate([4], "float32", "local", condition=n > 0, annotations={"k": 1})
    P = T.decl_buffer((4,), "float32", scope="local", data=p)
    P[0] = A[0]
    A[1] = P[0]
'''))
    assert 'p = T.allocate([4], "float32", "local", condition=n > 0, annotations={"k": 1})' \
        in text


def test_binders_followed_by_statements_print_scoped():
    A = decl_buffer((4,), "int32", "A")
    x = _e.Var("x", "int32")
    ptr = _e.Var("ptr", "handle")
    P = decl_buffer((1,), "int32", "P", data=ptr)
    store = _s.BufferStore(A, _e.IntImm("int32", 1), [_e.IntImm("int32", 0)])
    seq = _s.SeqStmt([
        _s.LetStmt(x, _e.IntImm("int32", 3), _s.BufferStore(A, x, [_e.IntImm("int32", 1)])),
        _s.AssertStmt(_e.IntImm("bool", 1), _e.StringImm("m"), store),
        _s.Allocate(ptr, "int32", [1], True, _s.DeclBuffer(P, _s.BufferStore(
            P, _e.IntImm("int32", 2), [_e.IntImm("int32", 0)]))),
        store])
    text = _round_trip(PrimFunc([A], seq, attrs={"global_symbol": "f"}))
    assert "with T.LetStmt(3) as x:" in text and 'with T.Assert(T.bool(True), "m"):' in text
    assert 'with T.allocate([1], "int32") as ptr:' in text
    assert 'P = T.decl_buffer((1,), "int32", data=ptr)' in text  # last in its body: unscoped


def test_a_function_name_that_is_no_identifier_prints_as_valid_python():
    from rvm.ir.module import IRModule

    x = te.placeholder((4,), name="x")
    y = te.compute(x.shape, lambda i: x[i] * 2.0, name="y")
    mod = IRModule({"<lambda>": te.create_prim_func([x, y])})
    text = mod.script()
    assert "def _lambda_(" in text
    assert [gv.name_hint for gv in from_source(text).get_global_vars()] == ["_lambda_"]
