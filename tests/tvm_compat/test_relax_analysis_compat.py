"""TVM's ``relax.analysis.contains_impure_call`` and ``computable_at_compile_time``, a
module's GlobalVars carrying their functions' purity, and ``relax.call_tir``/``relax.op.*``
called inside a script, in TVM's test style."""
import pytest

import rvm
import rvm.testing
from rvm import relax
from rvm.relax.analysis import computable_at_compile_time, contains_impure_call
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T


def _names(func):
    return [v.name_hint for v in computable_at_compile_time(func)]


def test_pure_and_impure_functions():
    @I.ir_module
    class Module:
        @R.function
        def pure_func(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
            y = R.add(x, x)
            return R.multiply(x, y)

        @R.function(pure=False)
        def impure_func() -> R.Object:
            y = R.print(format="a message")
            return y

    assert not contains_impure_call(Module["pure_func"])
    assert contains_impure_call(Module["impure_func"])
    assert contains_impure_call(Module["impure_func"].body)


def test_nested_function_definition_is_not_a_call():
    @R.function
    def outer() -> R.Tensor((), "int32"):
        @R.function(pure=False)
        def inner() -> R.Object:
            y = R.print(format="inner")
            return y

        x = R.const(0, "int32")
        return R.add(x, x)

    assert not contains_impure_call(outer)
    assert contains_impure_call(outer.body.blocks[0].bindings[0].value)


def test_recursive_call_is_ignored_on_request():
    @I.ir_module
    class Module:
        @R.function(pure=False)
        def recursive_impure() -> R.Object:
            x = R.const(1, "int32")
            y = R.add(x, x)
            w = Module.recursive_impure()
            return w

    func = Module["recursive_impure"]
    own_name = func.body.blocks[0].bindings[-1].value.op
    assert not own_name.struct_info.purity  # the GlobalVar knows its function is impure
    assert contains_impure_call(func)
    assert not contains_impure_call(func, own_name=own_name)


def test_computable_at_compile_time():
    @R.function
    def no_num_input(A: R.Tensor([16], "int32"), B: R.Tensor([16], "int32")):
        C = R.add(A, B)
        return C

    @R.function
    def weights(A: R.Tensor([16], "int32"), B: R.Tensor([16], "int32"),
                C: R.Tensor([16], "int32")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            D = R.add(B, C)
            E = R.add(A, D)
            F = R.add(D, D)
            R.output(E, F)
        return (E, F)

    assert _names(no_num_input) == []
    assert _names(weights) == ["B", "C", "D", "F"]


def test_symbolic_variables_known_at_compile_time():
    @R.function
    def func(A: R.Tensor(["n"], "int32"), B: R.Tensor(ndim=1, dtype="int32")):
        R.func_attr({"num_input": 1})
        n = T.int64()
        m = T.int64()
        B2 = R.match_cast(B, R.Tensor([m], "int32"))
        C = R.ones([m], "int32")
        D = R.ones([n], "int32")
        return (C, D)

    assert _names(func) == ["B", "B2", "C"]
    with pytest.raises(TypeError, match="expects a relax Function"):
        computable_at_compile_time(func.body)


def test_relax_functions_called_inside_a_script():
    @I.ir_module
    class Module:
        @T.prim_func
        def addone(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("addone"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] + T.float32(1)

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            lv0 = relax.call_tir(cls.addone, (x,), R.Tensor((4,), dtype="float32"))
            lv1 = relax.op.add(lv0, x)
            return lv1

    @I.ir_module
    class Expected:
        @T.prim_func
        def addone(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("addone"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] + T.float32(1)

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Expected
            lv0 = R.call_tir(cls.addone, (x,), R.Tensor((4,), dtype="float32"))
            lv1 = R.add(lv0, x)
            return lv1

    rvm.ir.assert_structural_equal(Module, Expected)


def test_other_python_functions_stay_refused_in_a_script():
    def helper(x):
        return x

    with pytest.raises(rvm.error.DiagnosticError, match="not callable here"):
        @R.function
        def func(x: R.Tensor((4,), "float32")):
            y = helper(x)
            return y


if __name__ == "__main__":
    rvm.testing.main()
