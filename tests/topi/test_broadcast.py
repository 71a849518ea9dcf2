import numpy as np
import pytest

from rvm import te, topi
from tests.topi.helpers import evaluate, rand


@pytest.mark.parametrize("fn, ref", [(topi.add, np.add), (topi.subtract, np.subtract),
                                     (topi.multiply, np.multiply), (topi.divide, np.divide),
                                     (topi.maximum, np.maximum)])
def test_broadcasting_binary_ops(fn, ref):
    a = te.placeholder((2, 3), name="a")
    b = te.placeholder((3,), name="b")
    out = fn(a, b)
    assert [d.value for d in out.shape] == [2, 3] and out.name.startswith("T_")
    x, y = rand(2, 3), rand(3, seed=1) + 3.0
    np.testing.assert_allclose(evaluate(out, [a, b], [x, y]), ref(x, y), rtol=1e-5)


def test_stretching_ones_on_both_sides():
    a = te.placeholder((2, 1), name="a")
    b = te.placeholder((1, 3), name="b")
    out = topi.add(a, b)
    assert [d.value for d in out.shape] == [2, 3]
    x, y = rand(2, 1), rand(1, 3, seed=2)
    np.testing.assert_allclose(evaluate(out, [a, b], [x, y]), x + y, rtol=1e-6)


def test_scalar_operand():
    a = te.placeholder((4,), name="a")
    x = rand(4)
    np.testing.assert_allclose(evaluate(topi.multiply(a, 2.0), [a], [x]), x * 2, rtol=1e-6)
    np.testing.assert_allclose(evaluate(topi.subtract(1.0, a), [a], [x]), 1 - x, rtol=1e-6)


def test_incompatible_shapes_are_rejected():
    with pytest.raises(ValueError, match="do not broadcast"):
        topi.add(te.placeholder((2, 3), name="a"), te.placeholder((4,), name="b"))


def test_block_names_follow_tvm():
    a = te.placeholder((1, 4), name="lv")
    b = te.placeholder((4,), name="B")
    out = topi.add(a, b)
    assert out.name == "T_add" and [iv.var.name_hint for iv in out.op.axis] == ["ax0", "ax1"]
