"""What both engines do alike: engine choice, C callees and Python values, error positions,
frames, the storage pool, instruments. Each test runs once per engine."""
import sys

import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine
from tests.runtime.ext_lib import load_ext_library

register_func("test.vm.engines.pair", lambda a, b: (a, b), override=True)
register_func("test.vm.engines.le", lambda a, b: a <= b, override=True)
register_func("test.vm.engines.sub", lambda a, b: a - b, override=True)
register_func("test.vm.engines.add", lambda a, b: a + b, override=True)


@pytest.fixture(scope="module", autouse=True)
def ext(tmp_path_factory):
    return load_ext_library(tmp_path_factory.mktemp("ext"))


def _closures():
    ib = ExecBuilder()
    with ib.function("adder", num_inputs=2):
        ib.emit_ret(ib.r(0))
    with ib.function("make", num_inputs=1):
        ib.emit_call("vm.builtin.make_closure", args=[ib.f("adder"), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_engine_choice(vm_engine):
    ex = _closures()
    assert VirtualMachine(ex, cpu(), engine="native").engine == "native"
    assert VirtualMachine(ex, cpu(), engine="python").engine == "python"
    with pytest.raises(ValueError, match="engine must be one of"):
        VirtualMachine(ex, cpu(), engine="jit")
    vm = VirtualMachine(ex, cpu())
    assert vm.engine == vm_engine
    add = vm["make"](3)
    assert vm.invoke_closure(add, 4) == 3 and add(5) == 3


def test_c_functions_python_values_and_error_positions():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("myadd", args=[ib.r(0), 5], dst=ib.r(2))
        ib.emit_call("test.vm.engines.pair", args=[ib.r(2), "s"], dst=ib.r(3))  # a Python tuple
        ib.emit_call("ext.type_codes", args=[ib.r(3), ib.r(1), ib.vm_state()], dst=ib.r(4))
        ib.emit_call("ext.echo", args=["text"], dst=ib.r(5))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(3), ib.r(4), ib.r(5)], dst=ib.r(6))
        ib.emit_ret(ib.r(6))
    with ib.function("fails", num_inputs=0):
        ib.set_source("fails", "lv1")
        ib.emit_call("ext.fail", args=["ValueError: boom"], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    vm = VirtualMachine(ib.get(), cpu())
    pair, codes, text = vm["main"](1, array(np.ones(2, "float32")))
    assert tuple(pair) == (6, "s") and text == "text"
    assert list(codes) == [13, 10, 14]   # array, NDArray, the VM state object
    with pytest.raises(ValueError, match="boom") as info:
        vm["fails"]()
    notes = "\n".join(info.value.__notes__)
    assert "in VM function 'fails', instruction 0: call  ext.fail" in notes
    assert "binding fails:lv1" in notes
    with pytest.raises(TypeError, match=r"main\(\) takes 2 argument\(s\), got 1"):
        vm["main"](1)


def _recursive():
    ib = ExecBuilder()
    with ib.function("depth", num_inputs=1):   # depth(n) = 0 if n <= 0 else 1 + depth(n-1)
        more = ib.label()
        ib.emit_call("test.vm.engines.le", args=[ib.r(0), 0], dst=ib.r(1))
        ib.emit_if(ib.r(1), more)
        ib.emit_ret(ib.r(0))
        ib.bind(more)
        ib.emit_call("test.vm.engines.sub", args=[ib.r(0), 1], dst=ib.r(2))
        ib.emit_call("depth", args=[ib.r(2)], dst=ib.r(3))
        ib.emit_call("test.vm.engines.add", args=[ib.r(3), 1], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    with ib.function("forever", num_inputs=1):
        ib.emit_call("forever", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_deep_recursion_uses_no_c_or_python_recursion():
    vm = VirtualMachine(_recursive(), cpu())
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        assert vm["depth"](1000) == 1000
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(RecursionError, match="VM call depth exceeded 100000") as info:
        vm["forever"](0)
    assert "(call depth 100000)" in "\n".join(info.value.__notes__)
    assert vm["depth"](3) == 3   # the frames were unwound


def _planned_program():
    ib = ExecBuilder()
    shape = ib.c(ib.convert_constant(ShapeTuple((4,))))
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    with ib.function("main", num_inputs=1):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), 0, shape, f32], dst=ib.r(2))
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), 16, 0, f32],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(3), 0, shape, f32], dst=ib.r(4))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(2), ib.r(4)], dst=ib.r(5))
        ib.emit_ret(ib.r(4))
    with ib.function("too_big", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), 4, 0, f32], dst=ib.r(0))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(0), 56, shape, f32], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_storage_pool_counters_and_reuse():
    vm = VirtualMachine(_planned_program(), cpu())
    for _ in range(50):
        out = vm["main"](0)
    assert out.shape == (4,)
    stats = vm.memory_stats()[0]
    assert (stats["requests"], stats["allocations"], stats["reuses"]) == (100, 3, 97)
    assert stats["bytes_allocated"] == 3 * 64 and stats["kind"] == "pooled"
    naive = VirtualMachine(_planned_program(), cpu(), memory_cfg="naive")
    for _ in range(5):
        naive["main"](0)
    assert naive.memory_stats()[0]["allocations"] == 10
    assert naive.memory_stats()[0]["bytes_allocated"] == 5 * (16 + 64)   # exact sizes
    with pytest.raises(ValueError, match=r"alloc_tensor: float32\[4\] \(16 bytes\) at offset 56 "
                                         "does not fit in a storage of 64 bytes"):
        vm["too_big"]()


def test_instruments_run_on_the_engine_in_use(vm_engine):
    vm = VirtualMachine(_planned_program(), cpu())
    main = vm["main"]
    seen = []
    vm.set_instrument(lambda func, name, before, ret, *args: seen.append((name, before)))
    main(0)
    assert vm.engine == vm_engine
    assert seen[:2] == [("vm.builtin.alloc_storage", True), ("vm.builtin.alloc_storage", False)]
    assert len(seen) == 10
    vm.set_instrument(None)
    seen.clear()
    main(0)
    assert seen == []
    with pytest.raises(TypeError, match="set_instrument expects a callable or None, got int"):
        vm.set_instrument(3)


def test_an_instrument_may_remove_itself():
    vm = VirtualMachine(_planned_program(), cpu())
    calls = []

    def once(func, name, before, ret, *args):
        calls.append(name)
        vm.set_instrument(None)

    vm.set_instrument(once)
    assert vm["main"](0).shape == (4,)
    assert calls == ["vm.builtin.alloc_storage"]
