"""VirtualMachine on hand-built executables: calls, control flow, frames, closures, tuples."""
import sys

import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import Array
from rvm.runtime.device import cpu
from rvm.runtime.module import Module
from rvm.runtime.ndarray import NDArray, array
from rvm.runtime.packed_func import register_func
from rvm.vm.closure import VMClosure
from rvm.vm.machine import VirtualMachine


@register_func("test.vm.add", override=True)
def _add(a, b):
    return array(a.numpy() + b.numpy()) if isinstance(a, NDArray) else a + b


register_func("test.vm.sub", lambda a, b: a - b, override=True)
register_func("test.vm.le", lambda a, b: a <= b, override=True)
register_func("test.vm.mul", lambda a, b: a * b, override=True)
register_func("test.vm.args", lambda *args: args, override=True)


def test_spec_section_4_example():
    ib = ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    ex = ib.get()
    a, b = array(np.arange(3.0)), array(np.ones(3))
    out = VirtualMachine(ex, cpu())["func0"](a, b)
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 3.0])
    # numpy arrays are accepted where NDArrays are expected
    out = VirtualMachine(ex, cpu())["func0"](np.arange(3.0), np.ones(3))
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 3.0])


def test_an_empty_numpy_argument_is_accepted():
    ib = ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    empty = np.zeros((2, 0, 4), "float32")  # numpy exports it with strides DLPack refuses
    out = VirtualMachine(ib.get(), cpu())["func0"](empty, empty)
    assert out.numpy().shape == (2, 0, 4)


def test_register_immediate_constant_function_and_state_arguments():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        c = ib.c(ib.convert_constant("hello"))
        ib.emit_call("test.vm.args", args=[ib.r(0), ib.imm(-4), c, ib.f("test.vm.sub"),
                                           ib.void_arg(), ib.vm_state()], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu())
    x, imm, const, func, void, state = vm["f"](7)
    assert (x, imm, const, void, state) == (7, -4, "hello", None, vm)
    assert func(5, 3) == 2


def _branchy():
    # g(x, y) = x + y if x <= y else x - y
    ib = ExecBuilder()
    with ib.function("g", num_inputs=2):
        other, done = ib.label(), ib.label()
        ib.emit_call("test.vm.le", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_if(ib.r(2), other)
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(3))
        ib.emit_goto(done)
        ib.bind(other)
        ib.emit_call("test.vm.sub", args=[ib.r(0), ib.r(1)], dst=ib.r(3))
        ib.bind(done)
        ib.emit_ret(ib.r(3))
    return ib.get()


def test_if_and_goto_both_ways():
    vm = VirtualMachine(_branchy(), cpu())
    assert vm["g"](2, 5) == 7
    assert vm["g"](9, 5) == 4


def test_loop_through_goto():
    # s = 0; i = 0; while i <= n: s += i; i += 1
    ib = ExecBuilder()
    with ib.function("sum_to", num_inputs=1):
        ib.emit_call("vm.builtin.copy", args=[0], dst=ib.r(1))   # s
        ib.emit_call("vm.builtin.copy", args=[0], dst=ib.r(2))   # i
        top, done = ib.label(), ib.label()
        ib.bind(top)
        ib.emit_call("test.vm.le", args=[ib.r(2), ib.r(0)], dst=ib.r(3))
        ib.emit_if(ib.r(3), done)
        ib.emit_call("test.vm.add", args=[ib.r(1), ib.r(2)], dst=ib.r(1))
        ib.emit_call("test.vm.add", args=[ib.r(2), 1], dst=ib.r(2))
        ib.emit_goto(top)
        ib.bind(done)
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu())
    assert vm["sum_to"](100) == 5050
    assert vm["sum_to"](-1) == 0


def _factorial_and_depth():
    ib = ExecBuilder()
    with ib.function("fact", num_inputs=1):
        base = ib.label()
        ib.emit_call("test.vm.le", args=[ib.r(0), 1], dst=ib.r(1))
        ib.emit_if(ib.r(1), base)
        ib.emit_ret(ib.r(0))
        ib.bind(base)
        ib.emit_call("test.vm.sub", args=[ib.r(0), 1], dst=ib.r(2))
        ib.emit_call("fact", args=[ib.r(2)], dst=ib.r(3))
        ib.emit_call("test.vm.mul", args=[ib.r(0), ib.r(3)], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    with ib.function("depth", num_inputs=1):   # depth(n) = 0 if n <= 0 else 1 + depth(n-1)
        more = ib.label()
        ib.emit_call("test.vm.le", args=[ib.r(0), 0], dst=ib.r(1))
        ib.emit_if(ib.r(1), more)
        ib.emit_ret(ib.r(0))
        ib.bind(more)
        ib.emit_call("test.vm.sub", args=[ib.r(0), 1], dst=ib.r(2))
        ib.emit_call("depth", args=[ib.r(2)], dst=ib.r(3))
        ib.emit_call("test.vm.add", args=[ib.r(3), 1], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    return ib.get()


def test_calls_between_vm_functions_and_deep_recursion():
    vm = VirtualMachine(_factorial_and_depth(), cpu())
    assert vm["fact"](10) == 3628800
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)   # far below the depth: frames must not use Python recursion
    try:
        assert vm["depth"](1000) == 1000
    finally:
        sys.setrecursionlimit(limit)


def test_runaway_recursion_is_an_error_not_a_crash():
    ib = ExecBuilder()
    with ib.function("forever", num_inputs=1):
        ib.emit_call("forever", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(RecursionError, match="VM call depth exceeded"):
        VirtualMachine(ib.get(), cpu())["forever"](0)


def test_closures_inside_the_loop_and_from_python():
    ib = ExecBuilder()
    with ib.function("adder", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("make", num_inputs=1):
        ib.emit_call("vm.builtin.make_closure", args=[ib.f("adder"), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("apply", num_inputs=2):
        ib.emit_call("vm.builtin.invoke_closure", args=[ib.vm_state(), ib.r(0), ib.r(1)],
                     dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    vm = VirtualMachine(ib.get(), cpu())
    add10 = vm["make"](10)
    assert vm["apply"](add10, 11) == 21
    assert add10(5) == 15
    assert vm.invoke_closure(add10, 1) == 11
    assert vm["apply"](lambda y: y * 3, 4) == 12     # any callable is a closure too
    with pytest.raises(TypeError, match=r"adder\(\) takes 2 argument"):
        add10(1, 2)
    too_many = VMClosure(vm, vm.executable.func_map["adder"], (1, 2))
    with pytest.raises(TypeError, match=r"adder\(\) takes 2 argument.*got 3"):
        vm["apply"](too_many, 3)


def test_tuples():
    ib = ExecBuilder()
    with ib.function("swap", num_inputs=2):
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(1), ib.r(0)], dst=ib.r(2))
        ib.emit_call("vm.builtin.tuple_getitem", args=[ib.r(2), 0], dst=ib.r(3))
        ib.emit_call("vm.builtin.check_tuple_info", args=[ib.r(2), 2, "swap: result"])
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(3), ib.r(2)], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    vm = VirtualMachine(ib.get(), cpu())
    out = vm["swap"](1, 2)
    assert isinstance(out, Array) and out[0] == 2 and list(out[1]) == [2, 1]
    vm.set_input("swap", 3, 4)
    vm.invoke_stateful("swap")
    assert vm.get_outputs("swap") == (4, (4, 3))


def test_stateful_api_with_tensors():
    vm = VirtualMachine(_branchy(), cpu())
    with pytest.raises(ValueError, match="set_input first"):
        vm.invoke_stateful("g")
    vm.set_input("g", 2, 5)
    vm.invoke_stateful("g")
    assert vm.get_outputs("g") == 7
    with pytest.raises(TypeError, match=r"g\(\) takes 2"):
        vm.set_input("g", 1)


def test_stateful_api_takes_arguments_by_name():
    """TVM's set_input/save_function take keyword arguments named after the parameters."""
    ib = ExecBuilder()
    with ib.function("sub", num_inputs=2, param_names=["x", "y"]):
        ib.emit_call("test.vm.sub", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    vm = VirtualMachine(ib.get(), cpu())
    vm.set_input("sub", y=2, x=10)
    vm.invoke_stateful("sub")
    assert vm.get_outputs("sub") == 8
    vm.set_input("sub", 10, y=7)
    vm.invoke_stateful("sub")
    assert vm.get_outputs("sub") == 3
    vm.save_function("sub", "sub_saved", y=1, x=5)
    assert vm["sub_saved"]() == 4
    vm.save_function("sub", "sub_timed", 5, 1, include_return=False)
    assert vm["sub_timed"]() is None
    with pytest.raises(TypeError, match=r"sub\(\) has no parameter 'z'; its parameters are "
                                        r"\(x, y\)"):
        vm.set_input("sub", z=1)
    with pytest.raises(TypeError, match="got parameter 'x' twice"):
        vm.set_input("sub", 1, x=2)
    with pytest.raises(TypeError, match="missing argument"):
        vm.set_input("sub", y=2)


def test_argument_count_and_unknown_function():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["x", "w"]):
        ib.emit_ret(ib.r(0))
    vm = VirtualMachine(ib.get(), cpu())
    with pytest.raises(TypeError, match=r"main\(\) takes 2 argument\(s\) \(x, w\), got 3"):
        vm["main"](1, 2, 3)
    with pytest.raises(ValueError, match="no VM function 'nope'; available: main"):
        vm["nope"]


def test_every_missing_callee_is_reported_at_construction():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("missing.one", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_call("test.vm.add", args=[ib.r(1), ib.r(0)], dst=ib.r(2))
        ib.emit_call("missing.two", args=[ib.r(2), ib.f("missing.three")], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    ib.declare_function("missing.kernel", kind="kernel")
    ex = ib.get()
    with pytest.raises(ValueError) as info:
        VirtualMachine(ex, cpu())
    message = str(info.value)
    assert "4 function(s) could not be resolved" in message
    for name in ("missing.one", "missing.two", "missing.three", "missing.kernel"):
        assert f"'{name}'" in message
    assert "used by main" in message and "test.vm.add" not in message


class _Lib(Module):
    type_key = "test.lib"

    def __init__(self, tag, names):
        super().__init__()
        self.tag, self.names = tag, names

    def _get_own_function(self, name):
        return (lambda: self.tag) if name in self.names else None

    def _own_function_names(self):
        return self.names


def test_resolution_order_kernels_then_imports_then_registry():
    register_func("test.vm.which", lambda: "registry", override=True)
    register_func("test.vm.kernel_only", lambda: "registry", override=True)
    ib = ExecBuilder()
    with ib.function("main"):
        for i, name in enumerate(["test.vm.which", "test.vm.imported", "test.vm.kernel_only"]):
            ib.emit_call(name, dst=ib.r(i))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(0), ib.r(1), ib.r(2)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    ib.declare_function("test.vm.kernel_only", kind="kernel")
    ib.add_kernel_library(_Lib("kernel", ["test.vm.which", "test.vm.kernel_only"]))
    ib.import_module(_Lib("import", ["test.vm.which", "test.vm.imported"]))
    assert list(VirtualMachine(ib.get(), cpu())["main"]()) == ["kernel", "import", "kernel"]


def test_errors_carry_the_vm_position():
    def boom(x):
        raise ValueError("kernel failed")

    register_func("test.vm.boom", boom, override=True)
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.set_source("main", "lv7")
        ib.emit_call("test.vm.boom", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu())
    with pytest.raises(ValueError, match="kernel failed") as info:
        vm["main"](1)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "in VM function 'main', instruction 0: call  test.vm.boom" in notes
    assert "binding main:lv7" in notes


def test_if_rejects_a_tensor_condition_without_read_if_cond():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_if(ib.r(0), 1)
        ib.emit_ret(ib.r(0))
    vm = VirtualMachine(ib.get(), cpu())
    assert vm["main"](0) == 0
    with pytest.raises(TypeError, match="read_if_cond"):
        vm["main"](array(np.ones(1)))


def test_a_device_that_is_not_a_device_names_what_was_expected():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_ret(ib.r(0))
    ex = ib.get()
    with pytest.raises(TypeError, match=r"expects a Device such as rvm.cpu\(\).*got str 'cpu'"):
        VirtualMachine(ex, "cpu")
    with pytest.raises(TypeError, match="got int 0"):
        VirtualMachine(ex, [cpu(), 0])
