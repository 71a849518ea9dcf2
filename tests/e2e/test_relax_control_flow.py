"""Relax If, calls between Relax functions, tuple inputs and outputs, match_cast: end to end."""
import numpy as np
import pytest

import rvm
from rvm.driver.relax_build import build
from rvm.script import ir as I, relax as R, tir as T
from rvm.vm.machine import VirtualMachine


@I.ir_module
class Program:
    @T.prim_func
    def add(x: T.handle, y: T.handle, z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        Z = T.match_buffer(z, (n,), "float32")
        for i in T.serial(n):
            with T.block("Z"):
                vi = T.axis.remap("S", [i])
                Z[vi] = X[vi] + Y[vi]

    @T.prim_func
    def scale(x: T.handle, z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Z = T.match_buffer(z, (n,), "float32")
        for i in T.serial(n):
            with T.block("Z"):
                vi = T.axis.remap("S", [i])
                Z[vi] = X[vi] * T.float32(3)

    @R.function
    def double(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        cls = Program
        y = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((n,), "float32"))
        return y

    @R.function
    def branch(cond: R.Tensor((), "bool"), x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Program
        if cond:
            d = cls.double(x)
            r = d
        else:
            s = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((n,), "float32"))
            r = s
        return r

    @R.function
    def apply_twice(x: R.Tensor((4,), "float32")):
        cls = Program
        f = cls.double
        y = f(x)
        z = f(y)
        return z

    @R.function
    def get_double():
        cls = Program
        return cls.double

    @R.function
    def apply(f: R.Callable((R.Tensor((4,), "float32"),), R.Tensor((4,), "float32")),
              x: R.Tensor((4,), "float32")):
        y = f(x)
        return y

    @R.function
    def swap(t: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))):
        a = t[0]
        b = t[1]
        return (b, a)

    @R.function
    def sum_pair(t: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))):
        cls = Program
        s = R.call_tir(cls.add, (t[0], t[1]), out_sinfo=R.Tensor((4,), "float32"))
        return (s, t)

    @R.function
    def cast(x: R.Tensor(ndim=1, dtype="float32")):
        m = T.int64()
        cls = Program
        y = R.match_cast(x, R.Tensor((m,), "float32"))
        z = R.call_tir(cls.add, (y, y), out_sinfo=R.Tensor((m,), "float32"))
        return z

    @R.function
    def cast_fixed(x: R.Tensor(ndim=1, dtype="float32")):
        y = R.match_cast(x, R.Tensor((3,), "float32"))
        return y


@I.ir_module
class OneLineBranches:
    @T.prim_func
    def scale(x: T.handle, z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Z = T.match_buffer(z, (n,), "float32")
        for i in T.serial(n):
            with T.block("Z"):
                vi = T.axis.remap("S", [i])
                Z[vi] = X[vi] * T.float32(3)

    @R.function
    def main(cond: R.Tensor((), "bool"), x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = OneLineBranches
        if cond:
            r = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((n,), "float32"))
        else:
            r = x
        return r


def test_if_with_one_line_branches():
    vm = VirtualMachine(build(OneLineBranches), rvm.cpu())
    x = np.arange(3, dtype="float32")
    np.testing.assert_allclose(vm["main"](np.array(True), x).numpy(), 3 * x)
    np.testing.assert_array_equal(vm["main"](np.array(False), x).numpy(), x)


@pytest.fixture(scope="module", params=["c", "python"])
def executable(request):
    return build(Program, target=request.param)


@pytest.fixture(scope="module")
def vm(executable, vm_engine):
    """The VM of this module's engine row, for each target's executable."""
    return VirtualMachine(executable, rvm.cpu(), engine=vm_engine)


def test_the_vm_runs_on_the_engine_of_its_row(vm, vm_engine):
    assert vm.engine == vm_engine


def _vec(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype("float32")


def test_call_between_relax_functions(vm):
    x = _vec(5)
    np.testing.assert_allclose(vm["double"](x).numpy(), 2 * x, rtol=1e-6)


def test_function_as_a_value(vm):
    x = _vec(4, 5)
    np.testing.assert_allclose(vm["apply_twice"](x).numpy(), 4 * x, rtol=1e-6)
    double = vm["get_double"]()
    np.testing.assert_allclose(double(x).numpy(), 2 * x, rtol=1e-6)
    np.testing.assert_allclose(vm["apply"](double, x).numpy(), 2 * x, rtol=1e-6)
    python_closure = rvm.runtime.convert(lambda a: rvm.nd.array(a.numpy() - 1))
    np.testing.assert_allclose(vm["apply"](python_closure, x).numpy(), x - 1, rtol=1e-6)


def test_if_takes_each_branch(vm):
    x = _vec(6, 1)
    np.testing.assert_allclose(vm["branch"](np.array(True), x).numpy(), 2 * x, rtol=1e-6)
    np.testing.assert_allclose(vm["branch"](np.array(False), x).numpy(), 3 * x, rtol=1e-6)


def test_tuple_input_and_output(vm):
    a, b = _vec(4, 2), _vec(4, 3)
    pair = rvm.runtime.convert([rvm.nd.array(a), rvm.nd.array(b)])
    out = vm["swap"](pair)
    np.testing.assert_array_equal(out[0].numpy(), b)
    np.testing.assert_array_equal(out[1].numpy(), a)
    summed, same = vm["sum_pair"](pair)
    np.testing.assert_allclose(summed.numpy(), a + b, rtol=1e-6)
    np.testing.assert_array_equal(same[0].numpy(), a)


def test_tuple_of_wrong_arity_is_rejected(vm):
    three = rvm.runtime.convert([rvm.nd.array(_vec(4))] * 3)
    with pytest.raises(ValueError, match=r"swap: parameter 't'.*2"):
        vm["swap"](three)


def test_match_cast_binds_a_new_symbolic_dimension(vm):
    for n in (1, 9):
        x = _vec(n, n)
        np.testing.assert_allclose(vm["cast"](x).numpy(), 2 * x, rtol=1e-6)


def test_match_cast_checks_at_run_time(vm):
    np.testing.assert_array_equal(vm["cast_fixed"](np.ones(3, "float32")).numpy(), [1, 1, 1])
    with pytest.raises(ValueError, match=r"cast_fixed.*3.*got 4"):
        vm["cast_fixed"](np.ones(4, "float32"))


@I.ir_module
class AnyDtypeCondition:
    @R.function
    def main(c: R.Tensor((), "float32"), x: R.Tensor((2,), "float32")):
        if c:
            y = R.add(x, x)
        else:
            y = R.multiply(x, x)
        return y


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_if_on_a_scalar_tensor_of_any_dtype(dtype, engine):
    """As in TVM, a 0-d tensor of any dtype is a condition: nonzero is true."""
    text = AnyDtypeCondition.script().replace('"float32"), x', f'"{dtype}"), x')
    from rvm.script import from_source

    vm = VirtualMachine(build(from_source(text)), rvm.cpu(), engine=engine)
    x = np.array([3, 4], "float32")
    np.testing.assert_array_equal(vm["main"](np.array(1, dtype), x).numpy(), [6, 8])
    np.testing.assert_array_equal(vm["main"](np.array(0, dtype), x).numpy(), [9, 16])
    if dtype.startswith("float"):
        np.testing.assert_array_equal(vm["main"](np.array(0.25, dtype), x).numpy(), [6, 8])
        np.testing.assert_array_equal(vm["main"](np.array(-0.0, dtype), x).numpy(), [9, 16])
    with pytest.raises(ValueError, match=r"main: parameter 'c' expects"):
        vm["main"](np.array([1, 0], dtype), x)
