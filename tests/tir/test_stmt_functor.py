from rvm import tir
from rvm.ir.base import structural_equal
from tests.tir.builders import matmul_func


class _CountLoads(tir.StmtExprVisitor):
    def __init__(self):
        self.loads = []
        self.loops = []

    def visit_buffer_load_(self, op):
        self.loads.append(op.buffer.name)
        super().visit_buffer_load_(op)

    def visit_for_(self, op):
        self.loops.append(op.loop_var.name_hint)
        super().visit_for_(op)


def test_visitor_hooks_see_every_node():
    v = _CountLoads()
    v.visit(matmul_func().body)
    assert v.loops == ["i", "j", "k"]
    assert sorted(v.loads) == ["A", "B", "C"]


def test_hook_names():
    from rvm.tir.stmt_functor import hook_name
    assert hook_name(tir.BufferLoad) == "visit_buffer_load_"
    assert hook_name(tir.EQ) == "visit_eq_" and hook_name(tir.IntImm) == "visit_int_imm_"
    assert hook_name(tir.FloorDiv) == "visit_floor_div_"


def test_mutator_returns_same_object_when_nothing_changes():
    f = matmul_func()
    assert tir.StmtExprMutator().visit(f.body) is f.body


class _AddToMul(tir.StmtExprMutator):
    def visit_add_(self, op):
        op = super().visit_add_(op)
        return tir.Mul(op.a, op.b)


def test_mutator_rebuilds_parents():
    f = matmul_func()
    new_body = _AddToMul().visit(f.body)
    assert new_body is not f.body
    store = new_body.block.body.body.body.body.block.body
    assert isinstance(store.value, tir.Mul)
    old_store = f.body.block.body.body.body.body.block.body
    assert isinstance(old_store.value, tir.Add)


def test_mutator_recomputes_dtype():
    x = tir.Var("x", "int32")

    class Widen(tir.StmtExprMutator):
        def visit_var_(self, op):
            return tir.Var("y", "int64")

        def visit_int_imm_(self, op):
            return tir.IntImm("int64", op.value)

    assert Widen().visit(x + 1).dtype == "int64"


def test_substitute_leaves_definitions_alone():
    i = tir.Var("i")
    j = tir.Var("j")
    loop = tir.For(i, 0, 4, "serial", tir.Evaluate(i + j))
    out = tir.substitute(loop, {j: 7, i: tir.Var("z")})
    assert out.loop_var is i
    assert structural_equal(out.body.value, tir.Var("z") + 7, map_free_vars=True)


def test_post_order_visit_children_first():
    seen = []
    x = tir.Var("x")
    tir.post_order_visit(tir.Evaluate(x + 1), lambda n: seen.append(type(n).__name__))
    assert seen == ["Var", "IntImm", "Add", "Evaluate"]
