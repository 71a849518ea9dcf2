"""Seed 000, "Hook Python function as Extern": kernels call the global registry."""
import numpy as np
import pytest

import rvm
from rvm import te, tir
from rvm.driver.build_module import build

TARGETS = ["c", "python"]


def _extern_addone(name):
    A = te.placeholder((10,), name="A")
    B = te.extern(A.shape, [A], lambda ins, outs: tir.call_packed(name, ins[0], outs[0]),
                  name="C")
    return te.create_prim_func([A, B])


@pytest.mark.parametrize("target", TARGETS)
def test_python_function_as_extern(target):
    seen = []

    @rvm.register_func("tvm.contrib.my_tvm_addone", override=True)
    def my_tvm_addone(x, y):
        seen.append((type(x), type(y), tuple(x.shape)))
        rvm.nd.array(x.numpy() + 1).copyto(y)

    f = build(_extern_addone("tvm.contrib.my_tvm_addone"), target)
    a = rvm.nd.array(np.random.uniform(size=(10,)).astype("float32"))
    b = rvm.nd.array(np.random.uniform(size=(10,)).astype("float32"))
    f["main"](a, b)
    np.testing.assert_allclose(b.numpy(), a.numpy() + 1, rtol=1e-5)
    assert seen == [(rvm.nd.NDArray, rvm.nd.NDArray, (10,))]


@pytest.mark.parametrize("target", TARGETS)
def test_errors_in_the_callback_reach_the_caller(target):
    def fail(x, y):
        raise KeyError("callback failed on purpose")

    rvm.register_func("test.call_packed.fail", fail, override=True)
    f = build(_extern_addone("test.call_packed.fail"), target)
    with pytest.raises(Exception, match="callback failed on purpose"):
        f["main"](np.zeros(10, "float32"), np.zeros(10, "float32"))


@pytest.mark.parametrize("target", TARGETS)
def test_missing_global_function_is_named(target):
    f = build(_extern_addone("test.call_packed.no_such_function"), target)
    with pytest.raises(ValueError, match="'test.call_packed.no_such_function' is not registered"):
        f["main"](np.zeros(10, "float32"), np.zeros(10, "float32"))


def test_scalars_and_symbolic_shapes_are_passed():
    seen = []
    rvm.register_func("test.call_packed.record", lambda *args: seen.append(args), override=True)
    n = te.var("n", "int64")
    A = te.placeholder((n, 2), name="A")
    B = te.extern(A.shape, [A], lambda ins, outs: tir.call_packed(
        "test.call_packed.record", ins[0], n * 2, tir.const(0.5, "float32")), name="B")
    for target in TARGETS:
        build(te.create_prim_func([A, B]), target)["main"](np.ones((3, 2), "float32"),
                                                           np.ones((3, 2), "float32"))
    assert [(tuple(a.shape), k, x) for a, k, x in seen] == [((3, 2), 6, 0.5)] * 2


def test_buffer_data_passes_as_an_address():
    seen = []
    rvm.register_func("test.call_packed.address", lambda p, n: seen.append((p, n)),
                      override=True)
    A = tir.decl_buffer((4,), "float32", name="A")
    func = tir.PrimFunc([A], tir.Evaluate(tir.call_packed("test.call_packed.address", A.data, 4)))
    a = np.ones(4, "float32")
    for target in TARGETS:
        build(func, target)["main"](a)
    assert seen == [(a.ctypes.data, 4)] * 2
