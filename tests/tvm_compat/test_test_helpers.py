"""What TVM's own test files import first, in TVM's test style: ``tvm.ir.base``,
``tvm.TVMError``, ``tvm.testing.parameters``/``parameter(by_dict=)``/``requires_llvm``/
``requires_gpu`` and ``tvm.tir.schedule.testing``."""
import numpy as np
import pytest

import rvm
import rvm.testing
from rvm import relax, tir
from rvm.ir.base import assert_structural_equal, structural_equal, structural_hash
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.tir.schedule.testing import assert_structural_equal_ignore_global_symbol

binary_op, np_op = rvm.testing.parameters(
    (relax.op.add, np.add),
    (relax.op.subtract, np.subtract),
    (relax.op.multiply, np.multiply),
)
dtype = rvm.testing.parameter(by_dict={"f32": "float32", "i64": "int64"})
_SEEN = []


def test_ir_base_is_the_module_of_structural_equality():
    import rvm.ir

    assert rvm.ir.base.__name__ == "rvm.ir.base"
    assert rvm.ir.assert_structural_equal is assert_structural_equal
    x = tir.Var("x", "int32")
    assert structural_equal(x + 1, x + 1)
    assert structural_hash(x + 1) == structural_hash(x + 1)
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        assert_structural_equal(x + 1, x + 2)


def test_tvm_error_catches_rvm_errors():
    assert rvm.TVMError is rvm.error.TVMError is rvm.error.RVMError
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    y = relax.Var("y", R.Tensor((2, 4), "float32"))
    with pytest.raises(rvm.TVMError, match="cannot broadcast"):
        bb.normalize(relax.op.add(x, y))
    with pytest.raises(ValueError, match="cannot broadcast"):  # and still a ValueError
        bb.normalize(relax.op.add(x, y))


def test_argument_kind_and_dtype_mismatch_are_type_errors():
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    i = relax.Var("i", R.Tensor((2, 3), "int32"))
    s = relax.Var("s", relax.ShapeStructInfo((2, 3)))
    with pytest.raises(TypeError, match="operand dtypes differ, float32 vs int32"):
        bb.normalize(relax.op.add(x, i))
    with pytest.raises(TypeError, match="must be a tensor"):
        bb.normalize(relax.op.add(s, x))
    with pytest.raises(rvm.error.StructInfoTypeError):
        bb.normalize(relax.op.multiply(x, i))


def test_parameters_vary_together(binary_op, np_op):
    _SEEN.append((binary_op, np_op))
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    assert isinstance(bb.normalize(binary_op(x, x)).struct_info, relax.TensorStructInfo)
    assert {binary_op.__name__: np_op.__name__}.popitem() in {
        ("add", "add"), ("subtract", "subtract"), ("multiply", "multiply")}


def test_parameters_ran_once_per_tuple():
    assert len(_SEEN) == 3 and len({op for op, _ in _SEEN}) == 3


def test_one_of_the_parameters_alone(np_op):
    assert np_op in (np.add, np.subtract, np.multiply)


def test_parameter_by_dict(dtype, request):
    expected = {"f32": "float32", "i64": "int64"}
    assert request.node.callspec.id in expected
    assert expected[request.node.callspec.id] == dtype


def test_parameter_arguments_are_checked():
    with pytest.raises(TypeError, match="either values"):
        rvm.testing.parameter(1, by_dict={"a": 1})
    with pytest.raises(ValueError, match="value set 1"):
        rvm.testing.parameters((1, 2), (3,))
    with pytest.raises(TypeError, match="at least one"):
        rvm.testing.parameters()


@rvm.testing.requires_llvm
def test_requires_llvm_runs_the_test():
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    lib = rvm.build(add_one, target="llvm")
    a = rvm.nd.array(np.arange(4, dtype="float32"))
    b = rvm.nd.empty((4,), "float32")
    lib["add_one"](a, b)
    rvm.testing.assert_allclose(b.numpy(), np.arange(4, dtype="float32") + 1)


def test_requires_gpu_skips():
    def on_gpu():
        pass

    marks = rvm.testing.requires_gpu(on_gpu).pytestmark
    assert [m.name for m in marks] == ["skip"] and "CPU only" in marks[0].kwargs["reason"]


def test_assert_structural_equal_ignore_global_symbol():
    @T.prim_func
    def func_a(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(0)

    @T.prim_func
    def func_b(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(0)

    @T.prim_func
    def func_c(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(1)

    with pytest.raises(ValueError):
        rvm.ir.assert_structural_equal(func_a, func_b)  # the global symbols differ
    assert_structural_equal_ignore_global_symbol(func_a, func_b)
    with pytest.raises(ValueError):
        assert_structural_equal_ignore_global_symbol(func_a, func_c)


if __name__ == "__main__":
    rvm.testing.main()
