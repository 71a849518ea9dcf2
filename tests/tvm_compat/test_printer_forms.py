"""The relax printer's forms as TVM 0.21 prints them, in TVM's test style: struct info,
nodes printed alone (``verbose_expr=True`` declares what they use), the statements TVM
prints without a variable, module-level ``R.ExternFunc``, nested functions, and the
``module_alias`` / ``show_all_struct_info`` options. Each module form also parses back."""
import pytest

import rvm
from rvm import IRModule, relax, tir
from rvm.ir import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import from_source


def _assert_print(obj, expected):
    text = obj if isinstance(obj, str) else obj.script(verbose_expr=True)
    assert text.strip().splitlines() == expected.strip().splitlines(), "\n" + text


def _round_trip(mod):
    assert_structural_equal(from_source(mod.script()), mod)


def _n():
    return tir.Var("n", "int64")


@pytest.mark.parametrize("sinfo, text", [
    (relax.ShapeStructInfo(ndim=-1), "R.Shape(ndim=-1)"),
    (relax.ShapeStructInfo(ndim=2), "R.Shape(ndim=2)"),
    (relax.TupleStructInfo([]), "R.Tuple"),
    (relax.TensorStructInfo(ndim=2, dtype="float16"), 'R.Tensor(dtype="float16", ndim=2)'),
    (relax.TensorStructInfo(ndim=-1, dtype=None), "R.Tensor"),
    (relax.FuncStructInfo([relax.ObjectStructInfo()], relax.ObjectStructInfo()),
     "R.Callable((R.Object,), R.Object, True)"),
    (relax.FuncStructInfo([], relax.ObjectStructInfo(), purity=False),
     "R.Callable((), R.Object, False)"),
    (relax.FuncStructInfo.opaque_func(purity=False), "R.Callable"),
    (relax.FuncStructInfo.opaque_func(relax.TensorStructInfo(ndim=1, dtype="int8"), True),
     'R.Callable(ret=R.Tensor(dtype="int8", ndim=1), purity=True)'),
])
def test_struct_info_forms(sinfo, text):
    _assert_print(sinfo, text)


def test_callable_purity_defaults_as_tvm():
    """R.Callable without purity: impure when opaque, pure with parameters."""
    @R.function(pure=False)
    def f(a: R.Callable, b: R.Callable(ret=R.Object), c: R.Callable((R.Object,), R.Object)):
        return a

    assert [p.struct_info_.purity for p in f.params] == [False, False, True]


def test_symbolic_struct_info_declares_its_variables():
    _assert_print(relax.TensorStructInfo([2, _n()], "float32"),
                  'n = T.int64()\nR.Tensor((2, n), dtype="float32")')


def test_var_declared_at_first_use():
    n = _n()
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([n], "float32"))
    _assert_print(relax.Tuple([x, y, x]), """
n = T.int64()
x: R.Tensor((n,), dtype="float32")
y: R.Tensor((n,), dtype="float32")
(x, y, x)""")
    assert x.script() == "x"  # without verbose_expr: the name only


def test_binding_and_block_forms():
    x = relax.Var("x", relax.TensorStructInfo([4], "float32"))
    lv = relax.DataflowVar("lv", relax.TensorStructInfo([4], "float32"))
    gv = relax.Var("gv", relax.TensorStructInfo([4], "float32"))
    block = relax.DataflowBlock([relax.VarBinding(lv, relax.op.exp(x)),
                                 relax.VarBinding(gv, relax.op.negative(lv))])
    _assert_print(relax.SeqExpr([block], gv), """
x: R.Tensor((4,), dtype="float32")
with R.dataflow():
    lv: R.Tensor((4,), dtype="float32") = R.exp(x)
    gv: R.Tensor((4,), dtype="float32") = R.negative(lv)
    R.output(gv)
gv""")


def test_if_prints_each_branch_value():
    c = relax.Var("c", relax.TensorStructInfo([], "bool"))
    a = relax.Var("a", relax.TensorStructInfo([3], "int32"))
    _assert_print(relax.If(c, relax.SeqExpr([], a), relax.SeqExpr([], a)), """
c: R.Tensor((), dtype="bool")
if c:
    a: R.Tensor((3,), dtype="int32")
    a
else:
    a: R.Tensor((3,), dtype="int32")
    a""")


def test_names_of_the_script_namespaces_get_a_suffix():
    r = relax.Var("R", relax.TensorStructInfo([2], "float32"))
    t = relax.Var("T", relax.TensorStructInfo([2], "float32"))
    _assert_print(relax.VarBinding(t, relax.op.exp(r)), """
R_1: R.Tensor((2,), dtype="float32")
T_1: R.Tensor((2,), dtype="float32") = R.exp(R_1)""")


def test_match_cast_is_annotated_unless_asked_not_to():
    @R.function
    def f(x: R.Tensor(ndim=2, dtype="float32")):
        y = R.match_cast(x, R.Tensor((2, 3), "float32"))
        z = R.add(y, y)
        return z

    text = f.script()
    assert 'y: R.Tensor((2, 3), dtype="float32") = R.match_cast(' in text
    assert 'z: R.Tensor((2, 3), dtype="float32") = R.add(y, y)' in text
    hidden = f.script(show_all_struct_info=False)
    assert "    y = R.match_cast(" in hidden and "    z = R.add(y, y)" in hidden
    assert_structural_equal(from_source(hidden), f)


def test_a_call_for_its_effect_prints_without_variable():
    @I.ir_module
    class Module:
        @R.function(pure=False)
        def main(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            R.print(x, format="x: {}")
            y = R.assert_op(R.const(True, "bool"), x, format="x: {}")
            return x

    lines = [line.strip() for line in Module.script().splitlines()]
    assert 'R.print(x, format=R.str("x: {}"))' in lines
    assert 'R.assert_op(R.const(True, "bool"), x, format=R.str("x: {}"))' in lines
    _round_trip(Module)


def test_extern_funcs_of_a_module():
    @R.function
    def main(a: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return a

    sinfo = relax.FuncStructInfo([], relax.TensorStructInfo(ndim=1, dtype="float32"))
    mod = IRModule({"main": main, "ext": relax.ExternFunc("ext"),
                    "typed": relax.ExternFunc("typed", sinfo)})
    lines = mod.script().splitlines()
    assert lines[lines.index("class Module:") + 1:][:2] == [
        '    ext = R.ExternFunc("ext")',
        '    typed = R.ExternFunc("typed", R.Callable((), R.Tensor(dtype="float32", ndim=1), '
        'True))']
    _round_trip(mod)


def test_extern_func_struct_info_must_be_a_callable():
    with pytest.raises(TypeError, match="FuncStructInfo"):
        relax.ExternFunc("f", relax.ObjectStructInfo())
    with pytest.raises(SyntaxError, match="expected R.ExternFunc"):
        from_source("@I.ir_module\nclass M:\n    x = R.const(1)\n")


def test_nested_function_prints_the_import_comment():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            @R.function
            def inner(y: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
                return y

            z = inner(x)
            return z

    text = Module.script()
    assert """
        # from rvm.script import relax as R

        @R.function
        def inner(y: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
            return y

        z: R.Tensor((), dtype="int32") = inner(x)
""" in text
    _round_trip(Module)


def test_module_alias():
    @I.ir_module
    class Module:
        @R.function
        def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            return x

        @R.function
        def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            cls = Module
            y = cls.f(x)
            return y

    assert "cls = Module" in Module.script() and "y: " in Module.script()
    text = Module.script(module_alias="")
    assert "cls" not in text and "= Module.f(x)" in text
    assert_structural_equal(from_source(text), Module)


@pytest.mark.parametrize("ty, text", [
    (relax.ShapeType(ndim=3), "R.Shape(ndim=3)"),
    (relax.ObjectType(), "R.Object"),
    (relax.PackedFuncType(), "R.PackedFunc"),
    (relax.TensorType(ndim=2, dtype="int8"), 'R.Tensor(ndim=2, dtype="int8")'),
])
def test_relax_types(ty, text):
    _assert_print(ty, text)


def test_call_tir_inplace_keywords_in_tvm_order():
    x = relax.Var("x", relax.TensorStructInfo([4], "int32"))
    call = relax.call_tir_inplace(rvm.ir.GlobalVar("k"), (x,), [0],
                                  relax.TensorStructInfo([4], "int32"))
    assert call.script() == ('R.call_tir_inplace(k, (x,), out_sinfo=R.Tensor((4,), '
                             'dtype="int32"), inplace_indices=[0])')


def test_tir_var_declared_before_use():
    _assert_print(tir.Var("a", "float32"), "a = T.float32()\na")
    _assert_print(tir.SizeVar("s", "int64"), "s = T.int64(is_size_var=True)\ns")
    assert tir.Var("a", "float32").script() == "a"


def test_tir_expressions_declare_their_variables_in_order():
    a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    _assert_print(tir.Div(a, b), "a = T.int32()\nb = T.int32()\nT.Div(a, b)")
    _assert_print(tir.Cast("float64", tir.Var("x", "float32")),
                  'x = T.float32()\nT.Cast("float64", x)')
    _assert_print(tir.Let(a, 1, a + 1), "a = T.int32()\nT.Let(a + 1, where={a: 1})")


def test_tir_buffer_and_load_declare_the_buffer():
    A = tir.decl_buffer((8, 8), "float16", name="A")
    i = tir.Var("i", "int32")
    _assert_print(A, 'A = T.Buffer((8, 8), "float16")\nA')
    _assert_print(tir.BufferLoad(A, [i, tir.IntImm("int32", 2)]),
                  'A = T.Buffer((8, 8), "float16")\ni = T.int32()\nA[i, 2]')
