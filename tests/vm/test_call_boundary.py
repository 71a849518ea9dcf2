"""Values crossing the call boundary (both engines): every array numpy can make is accepted or
refused naming the function and the parameter; numpy arrays inside tuple arguments are
converted like top-level ones; what a callable parameter returns is checked against the
struct info it declares."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I, relax as R


@I.ir_module
class Module:
    @R.function
    def vec(x: R.Tensor(("n",), "float32")):
        return x

    @R.function
    def anything(x: R.Tensor(ndim=-1, dtype="")):
        return x

    @R.function
    def pair(t: R.Tuple(R.Tensor((2,), "float32"), R.Tensor((3,), "int64"))):
        return t[1]

    @R.function
    def apply(f: R.Callable([R.Tensor((2,), "float32")], R.Tensor((2,), "float32")),
              x: R.Tensor((2,), "float32")):
        y = f(x)
        return y

    @R.function
    def apply_sym(f: R.Callable([R.Tensor(("n",), "float32")],
                                R.Tuple(R.Tensor(("n",), "float32"), R.Shape(ndim=2))),
                  x: R.Tensor(("m",), "float32")):
        y = f(x)
        return y


@pytest.fixture(scope="module")
def vm(vm_engine):
    return relax.VirtualMachine(relax.build(Module, target="c"), rvm.cpu())


ACCEPTED = {
    "empty": np.zeros(0, "float32"),
    "empty 2-d": np.zeros((0, 3), "float32"),
    "big-endian": np.arange(3, dtype=">f4"),
    "strided view": np.arange(6, dtype="float32")[::2],
    "read-only": np.frombuffer(np.arange(3, dtype="float32").tobytes(), "float32"),
    "Fortran order": np.asfortranarray(np.arange(6, dtype="float32").reshape(2, 3)),
    "2-d": np.array([[1, 2]], dtype="float32"),
    "0-d": np.array(1.5, "float32"),
    "bool": np.array([True, False]),
    "float16": np.arange(3, dtype="float16"),
    "uint64 big-endian": np.arange(3, dtype=">u8"),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_arrays_numpy_makes_are_accepted(vm, name):
    a = ACCEPTED[name]
    out = vm["anything"](a).numpy()
    assert out.dtype == a.dtype.newbyteorder("=") and out.shape == a.shape
    np.testing.assert_array_equal(out, np.asarray(a))


REFUSED = {
    "complex": (np.zeros(3, "complex64"), "dtype complex64 is not a tensor"),
    "object": (np.array([1, None], dtype=object), "dtype object is not a tensor"),
    "object of str and int": (np.array(["a", 1], dtype=object), "dtype object is not a tensor"),
    "datetime": (np.array(["2020-01-01"], "datetime64[D]"), "dtype datetime64[D]"),
    "structured": (np.zeros(2, dtype=[("a", "f4")]), "is not a tensor"),
    "void": (np.zeros(2, dtype="V4"), "dtype |V4 is not a tensor"),
    "long double": (np.zeros(2, np.longdouble), "is not a tensor"),
    "masked": (np.ma.array([1.0, 2.0], mask=[0, 1]), "a masked array is not a tensor"),
    "complex scalar": (np.complex64(1), "numpy scalar of dtype complex64"),
}


@pytest.mark.parametrize("name", REFUSED)
@pytest.mark.parametrize("func", ["vec", "anything"])
def test_arrays_no_tensor_holds_are_refused_naming_the_parameter(vm, name, func):
    value, message = REFUSED[name]
    with pytest.raises(TypeError, match=f"{func}: parameter 'x': ") as info:
        vm[func](value)
    assert message in str(info.value)


@pytest.mark.parametrize("func", ["vec", "anything"])
def test_a_string_array_is_a_string_tensor_which_a_tensor_parameter_refuses(vm, func):
    # numpy arrays of str cross as string tensors (rvm.vm.builtins_string), not NDArrays
    with pytest.raises(TypeError, match=f"{func}: parameter 'x' expects .*: expected a "
                                        "Tensor, got ndarray"):
        vm[func](np.array(["a", "b"]))


def test_checks_name_the_parameter_for_any_shape_or_dtype(vm):
    with pytest.raises(ValueError, match="vec: parameter 'x' expects float32.n.: expected a "
                                         "Tensor of rank 1, got rank 2"):
        vm["vec"](np.zeros((0, 3), "float32"))
    with pytest.raises(ValueError, match="expected dtype float32, got float16"):
        vm["vec"](np.zeros(3, "float16"))
    assert vm["vec"](np.zeros(0, "float32")).shape == (0,)


def test_numpy_arrays_inside_tuples_are_converted(vm):
    for container in (tuple, list):
        out = vm["pair"](container([np.ones(2, "float32"), np.arange(3, dtype=">i8")]))
        np.testing.assert_array_equal(out.numpy(), [0, 1, 2])
    with pytest.raises(TypeError, match="pair: parameter 't': a numpy array of dtype object"):
        vm["pair"]((np.ones(2, "float32"), np.array([None] * 3)))
    with pytest.raises(ValueError, match="pair: parameter 't' field 1 expects int64.3.: dimension 0 "
                                         "expected 3, got 4"):
        vm["pair"]((np.ones(2, "float32"), np.arange(4)))


def test_what_a_callable_returns_is_checked(vm):
    x = np.ones(2, "float32")
    np.testing.assert_array_equal(vm["apply"](lambda a: a, x).numpy(), x)
    with pytest.raises(ValueError, match="apply: the value returned by 'f' expects "
                                         "float32.2.: dimension 0 expected 2, got 3"):
        vm["apply"](lambda a: rvm.nd.array(np.zeros(3, "float32")), x)
    with pytest.raises(TypeError, match="the value returned by 'f' .*expected a Tensor, "
                                        "got int"):
        vm["apply"](lambda a: 5, x)
    with pytest.raises(ValueError, match="expected dtype float32"):
        vm["apply"](lambda a: rvm.nd.array(np.zeros(2, "int32")), x)


def test_what_a_callable_returns_is_checked_against_symbolic_struct_info(vm):
    from rvm.runtime.container import ShapeTuple
    x = np.ones(2, "float32")
    good = vm["apply_sym"](lambda a: (a, ShapeTuple([1, 2])), x)
    assert tuple(good[1]) == (1, 2)
    with pytest.raises(ValueError, match="apply_sym: the value returned by 'f' field 0 expects "
                                         "float32.m.: dimension 0 expected 2"):
        vm["apply_sym"](lambda a: (rvm.nd.array(np.zeros(5, "float32")), ShapeTuple([1, 2])),
                        x)
    with pytest.raises(ValueError, match="field 1"):
        vm["apply_sym"](lambda a: (a, ShapeTuple([1, 2, 3])), x)
