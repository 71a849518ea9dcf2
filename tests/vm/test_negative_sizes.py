"""A negative value bound to a symbolic size (a tensor's dimension ``m``, or a factor of a
dimension ``n * n``) is refused where it is bound, naming the parameter, on both engines and
both targets; a variable only inside a sum (``k + 5``) may be negative; a kernel called
directly refuses a negative scalar size on entry with the same text on both targets. A size
computed from others (``n - 5``, ``k + 5``, ``m - n``) that comes out negative is refused where
it is computed, naming the dimension, its tensor and the variables' values."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.runtime.container import ShapeTuple
from rvm.script import from_source

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def zeros(s: R.Shape(["m"])):
        m = T.int64()
        y = R.zeros(R.shape([m, 2]), "float32")
        return y

    @R.function
    def prim(k: R.Prim(value="m"), x: R.Tensor((4,), "float32")):
        m = T.int64()
        y = R.zeros(R.shape([m]), "float32")
        return y

    @R.function
    def square(x: R.Tensor((4,), "float32"), s: R.Shape(["n"])):
        n = T.int64()
        with R.dataflow():
            y = R.broadcast_to(R.reshape(x, R.shape([4, 1])), R.shape([4, n * n]))
            R.output(y)
        return y

    @R.function
    def offset(x: R.Tensor((4,), "float32"), s: R.Shape(["k"])):
        k = T.int64()
        with R.dataflow():
            y = R.broadcast_to(R.reshape(x, R.shape([4, 1])), R.shape([4, k + 5]))
            R.output(y)
        return y

    @R.function
    def cut(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        y = R.zeros(R.shape([n - 5]), "float32")
        return y

    @R.function
    def between(x: R.Tensor(("n",), "float32"), s: R.Shape(["m"])):
        n = T.int64()
        m = T.int64()
        y = R.zeros(R.shape([2, m - n]), "float32")
        return y
'''

X = np.arange(4, dtype="float32")


@pytest.fixture(scope="module", params=["c", "python"])
def executable(request):
    return relax.build(from_source(SOURCE), target=request.param)


@pytest.fixture
def vm(executable, vm_engine):
    return relax.VirtualMachine(executable, rvm.cpu(), engine=vm_engine)


def test_a_negative_dimension_is_refused_where_it_is_bound(vm):
    with pytest.raises(ValueError, match=r"^zeros: parameter 's' expects Shape\[m\]: dimension "
                                         r"0 is -3, but it defines a size, which must be >= 0 "
                                         r"\(shape \[-3\]\)"):
        vm["zeros"](ShapeTuple([-3]))
    assert vm["zeros"](ShapeTuple([3])).numpy().shape == (3, 2)


def test_a_negative_prim_value_size_is_refused_where_it_is_bound(vm):
    with pytest.raises(ValueError, match=r"^prim: parameter 'k' expects int64: the value is -3, "
                                         r"but it defines a size, which must be >= 0"):
        vm["prim"](-3, X)
    assert vm["prim"](0, X).numpy().shape == (0,)


def test_a_negative_factor_of_a_dimension_is_refused_where_it_is_bound(vm):
    # n * n is 9 for n = -3: the kernel would get -3 as a size
    with pytest.raises(ValueError, match=r"^square: parameter 's' expects Shape\[n\]: "
                                         r"dimension 0 is -3, but it defines a size"):
        vm["square"](X, ShapeTuple([-3]))
    np.testing.assert_array_equal(vm["square"](X, ShapeTuple([2])).numpy(),
                                  np.broadcast_to(X[:, None], (4, 4)))


def test_a_variable_inside_a_sum_may_be_negative(vm):
    np.testing.assert_array_equal(vm["offset"](X, ShapeTuple([-3])).numpy(),
                                  np.broadcast_to(X[:, None], (4, 2)))


def test_a_computed_size_that_comes_out_negative_is_refused_where_it_is_computed(vm):
    with pytest.raises(ValueError, match=r"^cut: dimension n - 5 of 'y' \(float32\[n - 5\]\) is "
                                         r"-1 \(n = 4\), but a size must be >= 0(\n|$)"):
        vm["cut"](X)
    assert vm["cut"](np.zeros(7, "float32")).numpy().shape == (2,)
    with pytest.raises(ValueError, match=r"^between: dimension m - n of 'y' \(float32\[2, m - n\]"
                                         r"\) is -3 \(m = 1, n = 4\), but a size must be "
                                         r">= 0(\n|$)"):
        vm["between"](X, ShapeTuple([1]))
    assert vm["between"](X, ShapeTuple([6])).numpy().shape == (2, 2)


def test_a_sum_with_a_negative_variable_is_refused_once_it_is_negative(vm):
    # k may be negative (test above), k + 5 may not
    with pytest.raises(ValueError, match=r"^offset: dimension k \+ 5 of '\w+' \(float32\[4, k \+ "
                                         r"5\]\) is -2 \(k = -7\), but a size must be >= 0(\n|$)"):
        vm["offset"](X, ShapeTuple([-7]))


def test_sizes_that_cannot_be_negative_are_not_checked(executable):
    text = executable.as_text()
    checked = {line.rsplit(";", 1)[1].split(":")[0].strip() for line in text.splitlines()
               if "call  vm.builtin.check_size" in line}
    assert checked == {"cut", "between", "offset"}  # not square's n * n, nor zeros' m


def test_check_size_refuses_malformed_calls():
    from tests.vm.test_builtins import builtin
    heap = rvm.nd.array(np.array([3, -2], "int64"))
    builtin("check_size")(heap, 0, "c")
    with pytest.raises(ValueError, match=r"^c is -2, but a size must be >= 0(\n|$)"):
        builtin("check_size")(heap, 1, "c")
    with pytest.raises(ValueError, match=r"^c is -2 \(n = 3\), but a size must be >= 0(\n|$)"):
        builtin("check_size")(heap, 1, "c", "n", 0)
    with pytest.raises(ValueError, match=r"^c: shape heap slot 2 out of range \(size 2\)$"):
        builtin("check_size")(heap, 2, "c")
    with pytest.raises(ValueError, match=r"^c: shape heap slot 7 out of range \(size 2\)$"):
        builtin("check_size")(heap, 0, "c", "n", 7)
    with pytest.raises(ValueError, match=r"^c: variables come as \(name, slot\) pairs, got 1 "):
        builtin("check_size")(heap, 0, "c", "n")
    with pytest.raises(TypeError, match=r"^c: a variable name must be a str, got int$"):
        builtin("check_size")(heap, 0, "c", 1, 0)
    with pytest.raises(TypeError, match=r"^c: the shape heap must be a 1-d int64 tensor"):
        builtin("check_size")(rvm.nd.array(np.zeros(2, "float32")), 0, "c")


KERNEL = '''
@T.prim_func
def tile(a: T.handle, b: T.handle, n: T.int64, m: T.int64):
    A = T.match_buffer(a, (4,), "float32")
    B = T.match_buffer(b, (n * m,), "float32")
    for i in range(n * m):
        B[i] = A[i % 4]
'''


@pytest.mark.parametrize("target", ["c", "python"])
def test_a_kernel_refuses_a_negative_scalar_size_on_entry(target):
    lib = rvm.build(from_source(KERNEL), target=target)
    out = np.zeros(6, "float32")
    with pytest.raises(ValueError, match=r"^tile: parameter 'n' is a size, expected >= 0, "
                                         r"got -2$"):
        lib["tile"](X, out, -2, -3)
    lib["tile"](X, out, 2, 3)
    np.testing.assert_array_equal(out, X[np.arange(6) % 4])
