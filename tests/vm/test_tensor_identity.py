"""A tensor has one Python object while one exists: passing a register to Python callees,
or returning it, hands back the object the caller already holds, and a tensor whose object
was collected gets a fresh one that still sees its data."""
import gc

import numpy as np

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine

seen = []
register_func("test.vm.identity.see", lambda *args: seen.append(args), override=True)
register_func("test.vm.identity.see_id", lambda x: seen.append(id(x)), override=True)
register_func("test.vm.identity.fill",
              lambda out: np.copyto(np.from_dlpack(out), np.arange(4, dtype="float32")),
              override=True)


def _pass_twice():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("test.vm.identity.see", args=[ib.r(0), ib.r(0)])
        ib.emit_call("test.vm.identity.see", args=[ib.r(0)])
        ib.emit_ret(ib.r(0))
    return ib.get()


def test_a_callee_and_the_caller_see_the_argument_object():
    seen.clear()
    x = array(np.ones(3, "float32"))
    out = VirtualMachine(_pass_twice(), cpu())["main"](x)
    assert out is x
    assert [len(args) for args in seen] == [2, 1]
    assert all(arg is x for args in seen for arg in args)


def test_a_temporary_gets_a_new_object_after_its_last_one_is_collected():
    ib = ExecBuilder()
    shape = ib.c(ib.convert_constant(ShapeTuple((4,))))
    f32 = ib.c(ib.convert_constant(DataType("float32")))
    with ib.function("main"):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), shape, 0, f32],
                     dst=ib.r(0))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(0), 0, shape, f32], dst=ib.r(1))
        ib.emit_call("test.vm.identity.fill", args=[ib.r(1)])  # its object goes here
        ib.emit_call("test.vm.identity.see_id", args=[ib.r(1)])
        ib.emit_call("test.vm.identity.see", args=[ib.r(1)])
        ib.emit_call("test.vm.identity.see", args=[ib.r(1)])
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), cpu())
    for _ in range(3):
        seen.clear()
        out = vm["main"]()
        kept_first, kept_second = seen[1][0], seen[2][0]
        assert kept_first is kept_second is out
        np.testing.assert_array_equal(out.numpy(), np.arange(4, dtype="float32"))
        del kept_first, kept_second, out
        seen.clear()
        gc.collect()
