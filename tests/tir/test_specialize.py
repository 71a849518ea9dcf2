"""PrimFunc.specialize: symbolic parameters and dimensions fixed, as TVM's specialize."""
import numpy as np
import pytest

import rvm
from rvm.ir.base import assert_structural_equal
from rvm.script import tir as T
from rvm.tir.buffer import decl_buffer


@T.prim_func
def scale(x: T.handle, y: T.handle, factor: T.float32):
    n, m = T.int64(), T.int64()
    X = T.match_buffer(x, (n, m), "float32")
    Y = T.match_buffer(y, (n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj] * factor


@T.prim_func
def scale_4x8(X: T.Buffer((T.int64(4), T.int64(8)), "float32"),
              Y: T.Buffer((T.int64(4), T.int64(8)), "float32"), factor: T.float32):
    for i, j in T.grid(T.int64(4), T.int64(8)):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj] * factor


def _dims():
    X = scale.buffer_map[scale.params[0]]
    return X.shape


def test_variables_become_constants():
    n, m = _dims()
    specialized = scale.specialize({n: 4, m: 8})
    expected = scale_4x8
    got_shape = [int(d) for d in specialized.buffer_map[specialized.params[1]].shape]
    assert got_shape == [4, 8]
    assert_structural_equal(specialized.body, expected.body, map_free_vars=True)


def test_a_buffer_fixes_its_dimensions():
    x = scale.params[0]
    specialized = scale.specialize({x: decl_buffer((4, 8), "float32", "X")})
    assert [int(d) for d in specialized.buffer_map[specialized.params[1]].shape] == [4, 8]
    lib = rvm.build(specialized.specialize({specialized.params[2]: 3.0}), target="c")
    a = np.arange(32, dtype="float32").reshape(4, 8)
    out = rvm.nd.empty((4, 8), "float32")
    lib[lib.function_names()[0]](rvm.nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), a * 3)


def test_a_scalar_parameter_leaves_the_signature():
    factor = scale.params[2]
    assert len(scale.specialize({factor: 2.0}).params) == 2


def test_bad_maps():
    n, _ = _dims()
    with pytest.raises(ValueError, match="not a buffer parameter"):
        scale.specialize({n: decl_buffer((4,), "float32")})
    with pytest.raises(ValueError, match="dimensions"):
        scale.specialize({scale.params[0]: decl_buffer((4,), "float32")})
    with pytest.raises(ValueError, match="is a buffer; map it to a Buffer"):
        scale.specialize({scale.params[0]: 4})
    with pytest.raises(TypeError, match="keys are parameters"):
        scale.specialize({3: 4})
