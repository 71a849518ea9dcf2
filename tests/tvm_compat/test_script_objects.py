"""The script namespaces as Python objects, in the style of TVM's tests that build IR outside a
decorated function: ``R.add`` is ``relax.op.add``, ``R.call_packed`` builds the packed call,
``T.meta_var``/``T.FloatImm``/``T.Var`` and the ``T.tvm_*`` intrinsics work from Python, and
what they build is what the parser builds from the same text."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.ir import assert_structural_equal
from rvm.relax.op.registry import list_op_names
from rvm.script import from_source, ir as I, relax as R, tir as T
from rvm.script.parser.relax_builtins import RELAX_TABLE
from rvm.script.parser.tir_builtins import TIR_TABLE
from rvm.script.parser.tir_intrinsics import SIGNATURES
from tests.tvm_compat.helpers import run_both


def _x(name="x", shape=(2, 3)):
    return relax.Var(name, R.Tensor(shape, "float32"))


def test_operators_are_the_relax_op_constructors():
    assert R.add is relax.op.add
    assert R.multiply is relax.op.multiply
    assert R.nn is relax.op.nn and R.nn.relu is relax.op.nn.relu
    assert R.call_tir is relax.op.call_tir
    assert R.print is relax.op.print and R.assert_op is relax.op.assert_op
    x = _x()
    call = R.add(x, x)
    assert isinstance(call, relax.Call) and call.op.name == "relax.add"


@pytest.mark.parametrize("name", sorted({n[len("relax."):].split(".")[0] for n in list_op_names()
                                         if n.startswith("relax.")} | set(RELAX_TABLE)))
def test_every_parsed_name_is_a_python_object(name):
    assert getattr(R, name) is not None, f"R.{name}"


def test_unknown_name_is_a_clear_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        R.no_such_op
    with pytest.raises(ValueError, match=r"R.output\(...\) describes the body.*bb.emit_output"):
        R.output(_x())
    with pytest.raises(ValueError, match="R.dataflow"):
        R.dataflow()


def test_built_outside_equals_parsed():
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        R.func_attr({"global_symbol": "main"})
        y = R.add(x, R.const(1.0, "float32"))
        z = R.call_packed("my.packed", y, sinfo_args=R.Tensor((2, 3), "float32"))
        return z

    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(R.add(x, R.const(1.0, "float32")))
        z = bb.emit(R.call_packed("my.packed", y, sinfo_args=R.Tensor((2, 3), "float32")))
        bb.emit_func_output(z)
    assert_structural_equal(bb.get()["main"], main)


def test_value_helpers():
    assert_structural_equal(R.shape([2, 3]), relax.ShapeExpr([2, 3]))
    assert_structural_equal(R.prim_value(3), relax.PrimValue(3))
    assert_structural_equal(R.str("a"), relax.StringImm("a"))
    assert_structural_equal(R.dtype("float32"), relax.DataTypeImm("float32"))
    assert_structural_equal(R.tuple(_x(), 1), relax.Tuple([_x(), relax.PrimValue(1)]), True)
    assert R.ExternFunc("f").global_symbol == "f"
    pair = R.match_cast(_x(), R.Tensor("float32", ndim=2))
    assert pair.sinfo.ndim == 2
    with pytest.raises(TypeError, match="R.prim_value expects an int, float or PrimExpr"):
        R.prim_value("three")
    with pytest.raises(TypeError, match="R.match_cast expects a struct info second"):
        R.match_cast(_x(), 3)


def test_call_tir_inplace_and_invoke_pure_closure():
    x = _x()
    call = R.call_tir_inplace(I.GlobalVar("k"), (x,), [0], R.Tensor((2, 3), "float32"))
    assert call.op.name == "relax.call_tir_inplace"
    clo = relax.Var("clo", R.Object())
    bb = relax.BlockBuilder()
    with bb.function("main", [clo, x]):
        with bb.dataflow():  # pure: allowed in a dataflow block
            y = bb.emit(R.invoke_pure_closure(clo, (x,), sinfo_args=[R.Tensor((2, 3),
                                                                               "float32")]))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    mod = bb.get()
    assert_structural_equal(from_source(mod.script()), mod)
    with pytest.raises(TypeError, match="sinfo_args must be one StructInfo"):
        R.invoke_pure_closure(clo, (x,), sinfo_args=[])


def test_tir_node_classes_and_dtypes():
    assert T.FloatImm is tir.FloatImm and T.IntImm is tir.IntImm and T.Var is tir.Var
    assert_structural_equal(T.FloatImm("float32", 1.5), tir.FloatImm("float32", 1.5))
    n = T.int32()
    assert isinstance(n, tir.Var) and n.dtype == "int32"
    assert isinstance(T.int64(is_size_var=True), tir.SizeVar)
    assert T.int32(5).value == 5 and T.float16(1).dtype == "float16"
    assert_structural_equal(T.float32(n), tir.Cast("float32", n))


def test_meta_var_outside_and_inside():
    mv = T.meta_var((1, 2))
    assert mv.value == (1, 2) and [m.value for m in mv] == [1, 2] and mv[1].value == 2

    @T.prim_func(private=True)
    def f(A: T.Buffer((4,), "int32"), n: T.int32):
        a, b = T.meta_var((n + 1, n * 2))
        A[0] = a + b

    @T.prim_func(private=True)
    def g(A: T.Buffer((4,), "int32"), n: T.int32):
        A[0] = n + 1 + n * 2

    assert_structural_equal(f, g)  # no LetStmt: the names stand for the expressions


def test_tvm_intrinsics_build_calls():
    frag = tir.Var("C", "handle")
    call = T.tvm_fill_fragment(frag, 16, 16, 16, 0, T.float32(0))
    assert call.op == "tir.tvm_fill_fragment" and call.dtype == "handle"
    assert T.tvm_warp_shuffle(T.uint32(0xFFFFFFFF), T.float16(1), 0, 32, 32).dtype == "float16"
    assert T.tvm_struct_get(frag, 0, 1, "int64").dtype == "int64"
    assert T.ptx_ldmatrix("float16", False, 4, ".b16", frag, 0, frag, 0).dtype == "float16"
    with pytest.raises(ValueError, match="T.tvm_fill_fragment expects 6 argument"):
        T.tvm_fill_fragment(frag, 16)
    with pytest.raises(ValueError, match="T.mma_fill expects the result dtype"):
        T.mma_fill(8, frag, 0)
    for name in SIGNATURES:
        assert name in TIR_TABLE and getattr(T, name) is not None


TVM_PRINTED = '''# from tvm.script import tir as T

@T.prim_func
def wmma_fill(C: T.Buffer((16, 16), "float16"), n: T.int32):
    T.tvm_fill_fragment(C.data, 16, 16, 16, 0, T.float16(0.0))
    T.tvm_storage_sync("shared")
    C[0, 0] = T.tvm_warp_shuffle(T.uint32(4294967295), C[0, 1], n, 32, 32)
'''


def test_tvm_printed_intrinsics_parse_and_print_back():
    func = from_source(TVM_PRINTED)
    text = func.script()
    assert text.splitlines()[1:] == TVM_PRINTED.splitlines()[1:]
    assert_structural_equal(from_source(text), func)


@pytest.mark.parametrize("target", ["c", "python"])
def test_gpu_intrinsic_refused_on_cpu_naming_it(target):
    func = from_source(TVM_PRINTED)
    with pytest.raises(Exception, match="tir.tvm_fill_fragment"):
        rvm.build(func, target=target)


def test_invoke_pure_closure_runs():
    bb = relax.BlockBuilder()
    a, b = _x("a", (3,)), _x("b", (3,))
    with bb.function("add", [a, b], private=True):
        added = bb.emit_func_output(bb.emit(R.add(a, b)))
    x = _x("x", (3,))
    with bb.function("main", [x]):
        with bb.dataflow():
            clo = bb.emit(R.make_closure(added, (x,)))
            y = bb.emit_output(R.invoke_pure_closure(clo, (x,), sinfo_args=[R.Tensor((3,),
                                                                                    "float32")]))
        bb.emit_func_output(y)
    data = np.array([1, 2, 3], "float32")
    np.testing.assert_allclose(run_both(bb.get(), data), 2 * data)
