"""Run-time limits met by hostile programs: each a clear error, never a crash (both engines)."""
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import MAX_CALL_DEPTH
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.vm.machine import VirtualMachine


def _program():
    ib = ExecBuilder()
    f64 = ib.c(ib.convert_constant(DataType("float64")))
    with ib.function("alloc", num_inputs=1):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), ib.r(0), 0, f64],
                     dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("nest", num_inputs=1):  # given 0, calls itself without end
        done = ib.label()
        ib.emit_call("vm.builtin.read_if_cond", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_if(ib.r(1), done)
        ib.emit_ret(ib.r(0))
        ib.bind(done)
        ib.emit_call("nest", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    return ib.get()


def test_a_petabyte_allocation_is_a_memory_error():
    vm = VirtualMachine(_program(), cpu())
    with pytest.raises(MemoryError, match="alloc_storage: cannot allocate 1000000000000000 "
                                          "bytes"):
        vm["alloc"](125_000_000_000_000)  # float64 elements: 1e15 bytes
    with pytest.raises(ValueError, match="overflow"):
        vm["alloc"](1 << 62)
    assert vm["alloc"](4) is not None  # the VM still works


def test_unbounded_nesting_hits_the_depth_limit():
    vm = VirtualMachine(_program(), cpu())
    with pytest.raises(RecursionError, match=f"VM call depth exceeded {MAX_CALL_DEPTH}"):
        vm["nest"](0)  # would nest forever: stopped at MAX_CALL_DEPTH (10^5) frames
    assert vm["nest"](1) == 1  # the frame stack unwound
