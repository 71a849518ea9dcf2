"""Threads: a VirtualMachine is used by one thread at a time (both engines refuse a second
one), and the native engine runs C callees without the GIL."""
import threading

import numpy as np
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.device import cpu
from rvm.runtime.packed_func import get_global_func, register_func
from rvm.vm.machine import VirtualMachine
from tests.runtime.ext_lib import load_ext_library


@pytest.fixture(scope="module", autouse=True)
def ext(tmp_path_factory):
    return load_ext_library(tmp_path_factory.mktemp("ext"))


def test_a_vm_used_from_two_threads_at_once_raises():
    entered, release = threading.Event(), threading.Event()

    def wait(x):
        entered.set()
        release.wait(5)
        return x

    register_func("test.vm.threads.wait", wait, override=True)
    ib = ExecBuilder()
    with ib.function("slow", num_inputs=1):
        ib.emit_call("test.vm.threads.wait", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu())
    results = []
    worker = threading.Thread(target=lambda: results.append(vm["slow"](1)))
    worker.start()
    entered.wait(5)
    try:
        with pytest.raises(RuntimeError, match="one thread at a time"):
            vm["slow"](2)
    finally:
        release.set()
        worker.join()
    assert results == [1] and vm["slow"](3) == 3


def test_c_callees_calling_back_and_failing():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("ext.sum_f32", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_call("ext.call_n", args=[ib.r(1), 3], dst=ib.r(3))   # calls back into Python
        ib.emit_call("myadd", args=[ib.r(0), 1], dst=ib.r(4))        # fails in C
        ib.emit_ret(ib.r(2))
    vm = VirtualMachine(ib.get(), cpu())
    seen = []
    with pytest.raises(TypeError, match="myadd expects two ints"):
        vm["main"](np.ones(4, "float32"), seen.append)
    assert seen == [0, 1, 2]


def _waiting_program():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("vm.builtin.copy", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_call("ext.wait_flag", args=[2000], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    return ib.get()


@pytest.mark.parametrize("release_gil", [True, False])
def test_the_native_engine_runs_c_callees_without_the_gil(release_gil):
    """While a C callee waits for a flag, another Python thread sets it: possible only if the
    engine released the GIL (concurrency; the python engine, the reference, keeps it)."""
    vm = VirtualMachine(_waiting_program(), cpu(), engine="native", release_gil=release_gil)
    set_flag = get_global_func("ext.set_flag")
    setter = threading.Thread(target=set_flag)
    timer = threading.Timer(0.05, setter.start)
    timer.start()
    seen = vm["main"](1)
    timer.join()
    setter.join()
    if not release_gil:
        set_flag()
        assert vm["main"](1) == 1   # the flag set after the run, seen by the next one
    assert seen == int(release_gil)


def test_own_constants_gives_a_vm_its_own_copy_of_the_weights():
    weights = np.arange(6, dtype="float32").reshape(2, 3)
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        w = ib.c(ib.convert_constant(rvm.nd.array(weights)))
        ib.emit_call("vm.builtin.copy", args=[w], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    ex = ib.get()
    shared, own = VirtualMachine(ex, cpu()), VirtualMachine(ex, cpu(), own_constants=True)
    np.testing.assert_array_equal(own["main"](0).numpy(), weights)
    ex.constants[0].copyfrom(np.zeros((2, 3), "float32"))   # the executable's copy changes
    np.testing.assert_array_equal(shared["main"](0).numpy(), np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(own["main"](0).numpy(), weights)
    with pytest.raises(TypeError, match="own_constants must be True or False, got 'yes'"):
        VirtualMachine(ex, cpu(), own_constants="yes")
