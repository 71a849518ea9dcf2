"""The link step: callees resolved and classified once, rows with absolute jump targets,
arguments as register or value references; and the native engine's checks of that form."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import CALL, GOTO, IF, LINKED_FIELDS, RET, CalleeKind, LinkedArg
from rvm.runtime._ffi import _bridge
from rvm.runtime.device import cpu
from rvm.runtime.packed_func import register_func
from rvm.vm.builtins import invoke_closure
from rvm.vm.closure import VMClosure
from rvm.vm.link import link
from rvm.vm.machine import VirtualMachine
from rvm.vm.native import EngineHooks

register_func("test.vm.link.py", lambda *a: a, override=True)


def _program():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        skip = ib.label()
        ib.emit_if(ib.r(0), skip)
        ib.emit_call("test.vm.link.py", args=[ib.r(0), 7, "s", ib.vm_state(), ib.void_arg()],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), 7], dst=ib.r(1))
        ib.bind(skip)
        ib.emit_call("apply", args=[ib.f("twice")], dst=ib.r(1))
        ib.emit_goto(1)
        ib.emit_ret(ib.r(1))
    with ib.function("apply", num_inputs=1):
        ib.emit_call("vm.builtin.invoke_closure", args=[ib.vm_state(), ib.r(0), 21], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    with ib.function("twice", num_inputs=1):
        ib.emit_call("test.vm.link.py", args=[ib.r(0), ib.r(0)], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    return ib.get()


def test_rows_callees_and_values():
    ex = _program()
    vm = VirtualMachine(ex, cpu())
    linked = link(ex, vm, vm.state)
    names = [f.name for f in ex.func_table]
    assert dict(zip(names, linked.kinds)) == {
        "main": CalleeKind.VM, "test.vm.link.py": CalleeKind.PYTHON,
        "vm.builtin.alloc_shape_heap": CalleeKind.C, "apply": CalleeKind.VM,
        "twice": CalleeKind.VM, "vm.builtin.invoke_closure": CalleeKind.CLOSURE}
    assert linked.callees[names.index("vm.builtin.invoke_closure")] is invoke_closure
    assert [name for name, _ in LINKED_FIELDS] == ["op", "dst", "reg", "callee", "target",
                                                   "nargs", "first_arg"]
    op, dst, reg, callee, target, nargs, first = linked.code[0]
    assert (op, reg, target) == (IF.code, 0, 3)              # absolute: instruction 3
    assert linked.code[4][0] == GOTO.code and linked.code[4][4] == 5
    assert linked.code[5][:3] == (RET.code, -1, 1)
    op, dst, reg, callee, target, nargs, first = linked.code[1]
    assert (op, dst, names[callee], nargs) == (CALL.code, 1, "test.vm.link.py", 5)
    args = linked.args[first:first + nargs]
    assert args[0] == (LinkedArg.REG, 0) and all(k == LinkedArg.VALUE for k, _ in args[1:])
    assert [linked.values[i] for _, i in args[1:]] == [7, "s", vm, None]  # Python: the VM
    first = linked.code[2][6]
    assert linked.values[linked.args[first][1]] is vm.state               # C: the state
    closure = linked.values[linked.args[linked.code[3][6]][1]]
    assert isinstance(closure, VMClosure) and closure.name == "twice"
    assert linked.values.count(7) == 1                                    # each value once


def test_both_engines_run_the_linked_form():
    ex = _program()
    for engine in ("python", "native"):
        vm = VirtualMachine(ex, cpu(), engine=engine)
        assert vm["main"](True) == (21, 21)
        assert vm["main"](False) == (21, 21)


def _native(ex, code=None, args=None):
    vm = VirtualMachine(ex, cpu(), engine="python")
    linked = link(ex, vm, vm.state)
    packed_code, packed_args = linked.pack()
    table = [(i.name, int(k), i.start, i.end, i.num_args, i.num_regs, c)
             for i, k, c in zip(ex.func_table, linked.kinds, linked.callees)]
    hooks = EngineHooks(vm, lambda *a: "", bool, vm.check_args, VMClosure)
    return _bridge.NativeVM(hooks, table, code or packed_code, args or packed_args,
                            list(linked.values), vm.state, True)


@pytest.mark.parametrize("row, field, value, message", [
    (0, 4, 99, "jump target outside the function"),
    (1, 3, 50, "function index out of range"),
    (1, 1, 40, "register out of range"),
    (1, 6, 10_000, "argument range outside the argument table"),
    (3, 5, 0, "argument count differs from the VM callee's"),
    (5, 0, 9, "unknown opcode"),
])
def test_the_native_engine_checks_every_index_of_the_linked_form(row, field, value, message):
    ex = _program()
    _native(ex)
    vm = VirtualMachine(ex, cpu(), engine="python")
    code, args = link(ex, vm, vm.state).pack()
    rows = np.frombuffer(code, dtype=np.int32).reshape(-1, len(LINKED_FIELDS)).copy()
    rows[row, field] = value
    with pytest.raises(ValueError, match=f"function 'main', instruction {row}: {message}"):
        _native(ex, code=rows.tobytes())


def test_the_native_engine_refuses_malformed_tables():
    ex = _program()
    vm = VirtualMachine(ex, cpu(), engine="python")
    code, args = link(ex, vm, vm.state).pack()
    with pytest.raises(TypeError, match="bytes of 28-byte rows"):
        _native(ex, code=code[:-4])
    pairs = np.frombuffer(args, dtype=np.int32).copy()
    pairs[3] = 1000   # the second argument of the first call: a value index
    with pytest.raises(ValueError, match="instruction 1: bad argument"):
        _native(ex, args=pairs.tobytes())
