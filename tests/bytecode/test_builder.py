"""ExecBuilder: emission, constants, jumps with backpatching, and the check in get()."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.function import FuncKind
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array


def _spec_example():
    ib = ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    return ib.get()


def test_spec_example_disassembles():
    ex = _spec_example()
    assert ex.as_text() == (
        "@func0(%0, %1):  # num_args=2 num_regs=3\n"
        "     0: call  test.vm.add  in: %0, %1  dst: %2\n"
        "     1: ret   %2\n"
        "\n"
        "@test.vm.add = packed function\n")
    assert [f.kind for f in ex.func_table] == [FuncKind.VM, FuncKind.PACKED]


def test_argument_kinds_and_constant_dedup():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1, param_names=["x"]):
        c0 = ib.convert_constant(np.arange(4, dtype="float32"))
        c1 = ib.convert_constant(array(np.arange(4, dtype="float32")))
        c2 = ib.convert_constant(ShapeTuple((2, 2)))
        assert c0 == c1 and c2 != c0
        assert ib.convert_constant(1) != ib.convert_constant(True)
        assert ib.convert_constant(0.0) != ib.convert_constant(-0.0)
        assert ib.convert_constant("float32") != ib.convert_constant(DataType("float32"))
        ib.emit_call("g", args=[ib.r(0), ib.imm(-7), ib.c(c2), ib.f("f"), ib.void_arg(),
                                ib.vm_state(), 1 << 60, "text", cpu(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    ex = ib.get()
    line = ex.as_text().splitlines()[1]
    assert "in: %0, i-7, c[1], f[f], %void, %vm, c[" in line
    assert ex.constants[c2] == (2, 2)
    assert 1 << 60 in ex.constants and "text" in ex.constants


def test_labels_backpatch_forward_and_backward_jumps():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        top, done = ib.label(), ib.label()
        ib.bind(top)
        ib.emit_if(ib.r(0), done)           # 0: forward, patched later
        ib.emit_goto(top)                   # 1: backward, known now
        ib.bind(done)
        ib.emit_ret(ib.r(0))                # 2
    ex = ib.get()
    assert [i.jump_offset for i in ex.instructions[:2]] == [2, -1]


def test_patch_by_position():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        pos = ib.emit_goto(0)
        ib.emit_ret(ib.r(0))
        ib.patch(pos, ib.current_position() - 1 - pos)
    assert ib.get().instructions[0].jump_offset == 1


def test_forward_declared_vm_function():
    ib = ExecBuilder()
    ib.declare_function("callee")
    with ib.function("caller", num_inputs=1):
        ib.emit_call("callee", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("callee", num_inputs=1):
        ib.emit_ret(ib.r(0))
    ex = ib.get()
    assert ex.function_info("callee").kind == FuncKind.VM


def test_use_before_def_is_rejected_with_disassembly():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        ib.emit_call("g", args=[ib.r(3)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(BytecodeVerificationError) as info:
        ib.get()
    message = str(info.value)
    assert "function 'f', instruction 0" in message
    assert "register %3 is read before it is written" in message
    assert ">>   0: call  g  in: %3  dst: %1" in message


def test_use_before_def_on_one_path_only():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        skip = ib.label()
        ib.emit_if(ib.r(0), skip)
        ib.emit_call("g", args=[], dst=ib.r(1))
        ib.bind(skip)
        ib.emit_ret(ib.r(1))    # %1 unwritten when the IF jumps
    with pytest.raises(BytecodeVerificationError, match="%1 is read before"):
        ib.get()


def test_constant_index_out_of_range_is_rejected():
    ib = ExecBuilder()
    with ib.function("f"):
        ib.emit_call("g", args=[ib.c(5)], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    with pytest.raises(BytecodeVerificationError, match="constant index 5 out of range"):
        ib.get()


def test_jump_out_of_function_is_rejected():
    ib = ExecBuilder()
    with ib.function("f", num_inputs=1):
        ib.emit_goto(5)
        ib.emit_ret(ib.r(0))
    with pytest.raises(BytecodeVerificationError, match="jump target 5 is outside"):
        ib.get()


def test_builder_misuse():
    ib = ExecBuilder()
    with pytest.raises(RuntimeError, match="outside"):
        ib.emit_ret(ib.r(0))
    with pytest.raises(ValueError, match="use ib.c"):
        ib.imm(1 << 60)
    with ib.function("f", num_inputs=1):
        with pytest.raises(RuntimeError, match="do not nest"):
            with ib.function("g"):
                pass
        ib.emit_ret(ib.r(0))
    with pytest.raises(ValueError, match="defined twice"):
        with ib.function("f", num_inputs=1):
            pass
    ib.declare_function("h", kind="vm")
    with pytest.raises(ValueError, match="'h' was declared but never defined"):
        ib.get()
    with pytest.raises(TypeError, match="ambiguous"):
        ib.convert_constant([1, 2])
    with pytest.raises(TypeError, match="cannot hold"):
        ib.convert_constant(object())


def test_unbound_label_is_reported():
    ib = ExecBuilder()
    with pytest.raises(ValueError, match="never bound"):
        with ib.function("f", num_inputs=1):
            ib.emit_goto(ib.label())
            ib.emit_ret(ib.r(0))
