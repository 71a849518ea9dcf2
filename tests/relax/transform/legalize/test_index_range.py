"""An index outside its axis fails take, gather_elements, gather_nd and the scatters with an
IndexError naming the index, the range and the axis, on the c and python targets and on both
VM engines, alone or fused with its consumer; in-range and negative indices still work."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax import op as O
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo as T
from rvm.tir.expr import SizeVar

F, I = "float32", "int64"
ENGINES = ("python", "native")


def _functions():
    n = SizeVar("n", "int64")
    return {
        "take": ([((5, 3), F), ((4,), I)], lambda x, i: O.take(x, i, axis=0)),
        "take_symbolic": ([((n, 2), F), ((3,), I)], lambda x, i: O.take(x, i, axis=0)),
        "take_flat": ([((6,), F), ((2, 2), "int32")], O.take),
        "take_fused": ([((5, 3), F), ((4,), I)],
                       lambda x, i: O.add(O.take(x, i, axis=0), O.take(x, i, axis=0))),
        "gather_elements": ([((3, 4), F), ((3, 2), I)],
                            lambda x, i: O.gather_elements(x, i, axis=1)),
        "gather_nd": ([((3, 4), F), ((2, 2), I)], O.gather_nd),
        "scatter_elements": ([((3, 4), F), ((1, 2), I), ((1, 2), F)],
                             lambda d, i, u: O.scatter_elements(d, i, u, axis=1)),
        "scatter_nd": ([((3, 4), F), ((2, 1), I), ((2, 4), F)], O.scatter_nd),
    }


def _module():
    bb = BlockBuilder()
    for name, (shapes, make) in _functions().items():
        params = [Var(f"a{k}", T(shape, dtype)) for k, (shape, dtype) in enumerate(shapes)]
        with bb.function(name, params):
            with bb.dataflow():
                out = bb.emit_output(make(*params))
            bb.emit_func_output(out)
    return bb.get()


@pytest.fixture(scope="module", params=["c", "python"])
def executable(request):
    return relax.build(_module(), target=request.param)


@pytest.fixture(params=ENGINES)
def vm(request, executable):
    return relax.VirtualMachine(executable, rvm.cpu(), engine=request.param)


_X = np.arange(15, dtype=F).reshape(5, 3)
_D = np.arange(12, dtype=F).reshape(3, 4)

# (function, arguments with one bad index, the message)
REFUSED = [
    ("take", [_X, np.array([0, 7, 1, 2], I)], r"take: index 7 out of range \[-5, 5\) along axis 0"),
    ("take", [_X, np.array([0, -6, 1, 2], I)],
     r"take: index -6 out of range \[-5, 5\) along axis 0"),
    ("take_symbolic", [np.zeros((4, 2), F), np.array([1, 4, 0], I)],
     r"take: index 4 out of range \[-4, 4\) along axis 0"),
    ("take_flat", [np.arange(6, dtype=F), np.array([[0, 1], [6, 2]], "int32")],
     r"take: index 6 out of range \[-6, 6\) along axis 0"),
    ("take_fused", [_X, np.array([9, 0, 0, 0], I)],
     r"take: index 9 out of range \[-5, 5\) along axis 0"),
    ("gather_elements", [_D, np.array([[0, 1], [4, 0], [0, 0]], I)],
     r"gather_elements: index 4 out of range \[-4, 4\) along axis 1"),
    ("gather_nd", [_D, np.array([[0, 1], [3, 0]], I)],
     r"gather_nd: index 3 out of range \[-3, 3\) along axis 0"),
    ("gather_nd", [_D, np.array([[0, -5], [1, 0]], I)],
     r"gather_nd: index -5 out of range \[-4, 4\) along axis 1"),
    ("scatter_elements", [_D, np.array([[1, 1000]], I), np.ones((1, 2), F)],
     r"scatter_elements: index 1000 out of range \[-4, 4\) along axis 1"),
    ("scatter_nd", [_D, np.array([[1], [-4]], I), np.ones((2, 4), F)],
     r"scatter_nd: index -4 out of range \[-3, 3\) along axis 0"),
]


@pytest.mark.parametrize("name, args, message", REFUSED,
                         ids=[f"{r[0]}_{k}" for k, r in enumerate(REFUSED)])
def test_an_index_outside_its_axis_is_refused(vm, name, args, message):
    with pytest.raises(IndexError, match=message):
        vm[name](*args)


def test_indices_inside_the_axis_give_numpy_values(vm):
    i = np.array([0, -1, 4, -5], I)
    np.testing.assert_array_equal(vm["take"](_X, i).numpy(), _X[i])
    np.testing.assert_array_equal(vm["take_fused"](_X, i).numpy(), 2 * _X[i])
    small = np.arange(8, dtype=F).reshape(4, 2)
    np.testing.assert_array_equal(vm["take_symbolic"](small, np.array([3, -4, 0], I)).numpy(),
                                  small[[3, -4, 0]])
    g = np.array([[0, -4], [3, 1], [-1, 2]], I)
    np.testing.assert_array_equal(vm["gather_elements"](_D, g).numpy(),
                                  np.take_along_axis(_D, g % 4, axis=1))
    nd = np.array([[2, -1], [-3, 0]], I)
    np.testing.assert_array_equal(vm["gather_nd"](_D, nd).numpy(), [_D[2, 3], _D[0, 0]])
    want = _D.copy()
    want[0, 3] = 5
    got = vm["scatter_elements"](_D, np.array([[-1, 3]], I), np.full((1, 2), 5, F)).numpy()
    np.testing.assert_array_equal(got, want)


def test_a_refused_call_leaves_the_vm_usable(vm):
    with pytest.raises(IndexError):
        vm["take"](_X, np.array([5, 0, 0, 0], I))
    np.testing.assert_array_equal(vm["take"](_X, np.array([1, 1, 1, 1], I)).numpy(),
                                  _X[[1, 1, 1, 1]])
