"""A negative value bound to a symbolic size (a tensor's dimension ``m``, or a factor of a
dimension ``n * n``) is refused where it is bound, naming the parameter, on both engines and
both targets; a variable only inside a sum (``k + 5``) may be negative; a kernel called
directly refuses a negative scalar size on entry with the same text on both targets."""
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
