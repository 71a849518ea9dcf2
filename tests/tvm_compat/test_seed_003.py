"""Seed 003 (a tour of TVM's Python API): the items it uses that rvm has, as it writes them
with ``tvm`` replaced by ``rvm``: ``from rvm.topi import tag`` / ``tag.is_injective``, and the
runtime Module ``rvm.build`` returns (``entry_name``, ``get_function_list``,
``get_function``, ``time_evaluator(func.entry_name, rvm.cpu(), number=10)``, calling it)."""
import numpy as np
import pytest

import rvm
from rvm import te, topi
from rvm.topi import tag


def test_topi_tags():
    x = te.placeholder((4, 6), name="x")
    assert tag.is_injective(topi.add(x, x).op.tag)
    assert tag.is_injective(topi.multiply(x, 2.0).op.tag)
    assert tag.is_injective(topi.sigmoid(x).op.tag)
    assert tag.is_injective(topi.reshape(x, (6, 4)).op.tag)
    assert tag.is_injective(topi.transpose(x).op.tag)
    assert tag.is_injective(topi.broadcast_to(x, (4, 6)).op.tag)
    assert not tag.is_injective(topi.sum(x, axis=1).op.tag)
    assert topi.sum(x, axis=1).op.tag == tag.COMM_REDUCE
    assert tag.is_broadcast(topi.exp(x).op.tag) and not tag.is_broadcast(topi.transpose(x).op.tag)
    assert tag.is_injective(tag.ELEMWISE + "_custom") and not tag.is_injective("")


def _built(name="add"):
    A = te.placeholder((8,), name="A")
    B = te.placeholder((8,), name="B")
    C = te.compute((8,), lambda i: A[i] + B[i], name="C")
    return rvm.build(te.create_prim_func([A, B, C]), target="llvm", name=name)


def test_built_module_is_callable_by_its_entry_name():
    func = _built()
    a, b = (rvm.nd.array(np.arange(8, dtype="float32") * k) for k in (1, 2))
    c = rvm.nd.empty((8,), "float32")
    func(a, b, c)
    np.testing.assert_array_equal(c.numpy(), np.arange(8) * 3)
    assert func.entry_name == "__rvm_main__"
    assert func.get_function_list() == ["add"]
    f = func["add"]
    c2 = rvm.nd.empty((8,), "float32")
    f(a, b, c2)
    np.testing.assert_array_equal(c2.numpy(), c.numpy())
    assert func.get_function(func.entry_name) is not None
    timer = func.time_evaluator(func.entry_name, rvm.cpu(), number=10)
    assert timer(a, b, c).mean > 0
    assert func.type_key == "c_kernels" and "add" in func.get_source()


def test_entry_of_a_module_of_several_functions():
    from rvm.script import ir as I, tir as T

    @I.ir_module
    class Two:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] + T.float32(1)

        @T.prim_func
        def other(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(0)

    mod = rvm.build(Two)
    assert sorted(mod.get_function_list()) == ["main", "other"]
    a = rvm.nd.array(np.zeros(4, "float32"))
    mod(a)  # the entry of several functions is main
    np.testing.assert_array_equal(a.numpy(), np.ones(4))


def test_module_without_entry_says_which_functions_it_has():
    from rvm.script import ir as I, tir as T

    @I.ir_module
    class Pair:
        @T.prim_func
        def first(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(1)

        @T.prim_func
        def second(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(2)

    mod = rvm.build(Pair)
    with pytest.raises(ValueError, match="module 'c_kernels' has no entry function: it has 2 "
                                         r"functions \(first, second\) and none named 'main'"):
        mod(rvm.nd.empty((4,), "float32"))
    assert mod.entry_name not in mod and "first" in mod
    a = rvm.nd.empty((4,), "float32")
    mod["second"](a)
    np.testing.assert_array_equal(a.numpy(), np.full(4, 2.0))


def test_a_module_passes_through_packed_calls_as_itself():
    func = _built()
    assert rvm.runtime.convert(func) is func
    assert rvm.runtime.convert(lambda m: m)(func) is func
    assert rvm.testing.echo(func) is func
