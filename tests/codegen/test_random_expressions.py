"""Random elementwise expressions: the c target computes what the python reference does.

Integer expressions are compared exactly (int64, small operands, so no
overflow; division by zero is defined as 0 in both backends), float ones
within float32 rounding.
"""
import random

import numpy as np
import pytest

from rvm import te, tir
from rvm.driver.build_module import build
from rvm.ir.module import IRModule

N = 24
COUNT = 24
# Divisors are the input B (zero at run time sometimes): a divisor folding to the constant
# zero is rejected at build time instead.
INT_OPS = [
    lambda a, b, d: a + b, lambda a, b, d: a - b, lambda a, b, d: a * b,
    lambda a, b, d: a // d, lambda a, b, d: a % d, lambda a, b, d: tir.truncdiv(b, d),
    lambda a, b, d: tir.truncmod(a, d), lambda a, b, d: tir.min(a, b),
    lambda a, b, d: tir.max(a, b), lambda a, b, d: tir.Select(a < b, a, b - a),
]
FLOAT_OPS = [
    lambda a, b, d: a + b, lambda a, b, d: a - b, lambda a, b, d: a * b,
    lambda a, b, d: a / d, lambda a, b, d: tir.min(a, b), lambda a, b, d: tir.max(a, b),
    lambda a, b, d: tir.exp(a * 0.1) + b, lambda a, b, d: tir.tanh(a) * b,
    lambda a, b, d: tir.if_then_else(a > b, tir.sqrt(tir.abs(a)), b),
    lambda a, b, d: a.astype("int32").astype("float32") + b,
]


def _tree(rng, leaves, ops, depth, const):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(leaves) if rng.random() < 0.85 else const(rng)
    op = rng.choice(ops)
    return op(_tree(rng, leaves, ops, depth - 1, const), _tree(rng, leaves, ops, depth - 1, const),
              leaves[1])


def _module():
    rng = random.Random(20261122)
    funcs = {}
    for k in range(COUNT):
        dtype = "int64" if k % 2 == 0 else "float32"
        A, B = te.placeholder((N,), dtype, name="A"), te.placeholder((N,), dtype, name="B")
        if dtype == "int64":
            const = lambda r: tir.const(r.choice([-7, -3, -1, 1, 2, 5]), "int64")  # noqa: E731
            ops = INT_OPS
        else:
            const = lambda r: tir.const(round(r.uniform(-2, 2), 3), "float32")  # noqa: E731
            ops = FLOAT_OPS
        C = te.compute((N,), lambda i: _tree(rng, [A[i], B[i]], ops, 3, const), name="C")
        funcs[f"expr{k}_{dtype}"] = te.create_prim_func([A, B, C])
    return IRModule(funcs)


@pytest.fixture(scope="module")
def libraries():
    mod = _module()
    return build(mod, "c"), build(mod, "python"), [gv.name_hint for gv in mod.functions]


def test_c_matches_python_reference(libraries):
    c_lib, py_lib, names = libraries
    rng = np.random.default_rng(7)
    for name in names:
        if name.endswith("int64"):
            a, b = rng.integers(-60, 60, N), rng.integers(-6, 6, N)
        else:
            a, b = (rng.standard_normal(N) * 3).astype("float32"), \
                rng.standard_normal(N).astype("float32")
        out_c, out_py = np.zeros_like(a), np.zeros_like(a)
        c_lib[name](a, b, out_c)
        py_lib[name](a, b, out_py)
        if a.dtype.kind == "i":
            np.testing.assert_array_equal(out_c, out_py, err_msg=name)
        else:
            np.testing.assert_allclose(out_c, out_py, rtol=1e-5, atol=1e-5, err_msg=name)
