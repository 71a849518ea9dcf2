"""NDArray.is_view, in TVM's test style: a tensor that views memory it does not own."""
import numpy as np

import rvm
from rvm import te


def test_allocated_tensors_are_not_views():
    assert not rvm.nd.array(np.arange(4, dtype="float32")).is_view
    assert not rvm.nd.empty((2, 3), "int8").is_view


def test_views_of_a_tensor_are_views():
    a = rvm.nd.array(np.arange(6, dtype="float32"))
    v = a.view((2, 3))
    assert v.is_view and v.view((6,)).is_view
    assert not a.is_view
    v[0, 0] = 7.0  # the same memory
    assert a.numpy()[0] == 7.0


def test_a_copy_of_a_view_is_not():
    v = rvm.nd.array(np.ones(4, "float32")).view((2, 2))
    assert not rvm.nd.array(v).is_view


def test_dlpack_import_views_the_producers_memory():
    src = np.arange(3, dtype="int32")
    t = rvm.nd.from_dlpack(src)
    assert t.is_view
    src[0] = 9
    assert t.numpy()[0] == 9


def test_a_python_callback_gets_the_callers_tensor():
    seen = []
    f = rvm.runtime.convert(lambda arr: seen.append(arr.is_view))
    f(rvm.nd.array([1, 2, 3]))
    assert seen == [False]


def test_a_kernel_lends_its_buffers_to_a_callback_as_views():
    seen = []

    @rvm.register_func("testing.tvm_compat.record_is_view", override=True)
    def record(x, y):
        seen.append((x.is_view, y.is_view))
        y.copyfrom(x.numpy() * 2)

    A = te.placeholder((4,), name="A")
    B = te.extern(A.shape, [A], lambda ins, outs: rvm.tir.call_packed(
        "testing.tvm_compat.record_is_view", ins[0], outs[0]), name="B")
    f = rvm.build(te.create_prim_func([A, B]), "llvm")
    a = rvm.nd.array(np.arange(4, dtype="float32"))
    b = rvm.nd.empty((4,), "float32")
    f(a, b)
    assert seen == [(True, True)]
    np.testing.assert_array_equal(b.numpy(), np.arange(4) * 2)
