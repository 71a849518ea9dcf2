"""The link step: an Executable becomes the linked form both engines execute.

Done once per VirtualMachine, in one place:

1. every function-table entry is resolved, in a stated order: VM functions
   are the executable's own bytecode; other names are looked up in its kernel
   libraries, then (for PACKED entries) its imported modules, then the global
   registry. Every name found nowhere is reported at once, and so is every registered
   global an executable loaded from a file may not call (rvm.bytecode.callees).
2. every callee is classified into a ``CalleeKind`` (VM, C, PYTHON, CLOSURE).
3. every instruction becomes a row of ``LINKED_FIELDS`` with absolute jump
   targets; CALL arguments become (kind, index) pairs reading a register or a
   linked value: immediates, constants, function values, None, and the VM
   state (the C state object for C callees, the VirtualMachine for others).

The python engine (rvm.vm.interpreter) reads these rows directly; the native
engine receives them as flat int32 arrays (``pack``) and reads them in C.

>>> from rvm.bytecode.builder import ExecBuilder
>>> ib = ExecBuilder()
>>> with ib.function("f", num_inputs=1):
...     _ = ib.emit_call("vm.builtin.copy", args=[ib.r(0)], dst=ib.r(1))
...     _ = ib.emit_ret(ib.r(1))
>>> linked = link(ib.get(), vm=None, state=None)
>>> linked.code[0], linked.args, [k.name for k in linked.kinds]
((1, 1, 0, 1, 0, 1, 0), [(0, 0)], ['VM', 'C'])
"""
import array
from typing import NamedTuple

from rvm.bytecode.callees import check_global_callees, lookup_callee
from rvm.bytecode.contract import (
    CALL, LINKED_FIELDS, OPCODES, VOID_REG, ArgKind, CalleeKind, LinkedArg, Operand,
)
from rvm.bytecode.function import FuncKind
from rvm.runtime.packed_func import PackedFunc
from rvm.vm import builtins_sequence, builtins_string  # noqa: F401 - register builtins
from rvm.vm.builtins import invoke_closure
from rvm.vm.closure import VMClosure

_FIELD = {name: i for i, (name, _) in enumerate(LINKED_FIELDS)}
_REG, _VALUE = int(LinkedArg.REG), int(LinkedArg.VALUE)


class Linked(NamedTuple):
    """The linked form of an executable.

    ``code`` holds one tuple of ``LINKED_FIELDS`` per instruction; ``args``
    one (LinkedArg, index) pair per CALL argument; ``values`` what VALUE
    arguments index; ``callees``/``kinds`` one entry per function-table entry
    (the VMClosure, C PackedFunc or Python callable, and its CalleeKind).
    """

    code: list
    args: list
    values: list
    callees: list
    kinds: list

    def pack(self):
        """(code, args) as int32 bytes, the layout of the C structs of the contract."""
        code = array.array("i", [field for row in self.code for field in row])
        args = array.array("i", [field for pair in self.args for field in pair])
        return code.tobytes(), args.tobytes()


def _users(ex, missing):
    """{function index: names of the VM functions that call or reference it}."""
    users = {i: [] for i in missing}
    for info in ex.func_table:
        if info.kind != FuncKind.VM:
            continue
        for instr in ex.instructions[info.start:info.end]:
            if instr.op is not CALL:
                continue
            refs = [instr.field("func")] + [a.value for a in instr.field("args")
                                            if a.kind == ArgKind.FUNC]
            for ref in refs:
                if ref in users and info.name not in users[ref]:
                    users[ref].append(info.name)
    return users


def resolve(ex, vm):
    """The callee of every function-table entry; ValueError naming every missing one, or
    every global an executable from a file may not call (rvm.bytecode.callees)."""
    check_global_callees(ex, "VirtualMachine")
    callees, missing = [], []
    for index, info in enumerate(ex.func_table):
        func = VMClosure(vm, index) if info.kind == FuncKind.VM else lookup_callee(ex, info)
        if func is None:
            missing.append(index)
        callees.append(func)
    if missing:
        users = _users(ex, missing)
        lines = [f"  '{ex.func_table[i].name}' ({ex.func_table[i].kind.name.lower()}, "
                 f"used by {', '.join(users[i]) or 'no function'})" for i in missing]
        raise ValueError(
            f"VirtualMachine: {len(missing)} function(s) could not be resolved (searched "
            f"the executable's kernel libraries, its imported modules, then the global "
            f"registry):\n" + "\n".join(lines))
    return callees


def classify(info, callee):
    """The CalleeKind of a resolved function-table entry, and the callee to keep for it."""
    if info.kind == FuncKind.VM:
        return CalleeKind.VM, callee
    if isinstance(callee, PackedFunc):
        if not callee.is_python:
            return CalleeKind.C, callee
        callee = callee.python_func  # same semantics, without the packed wrapper's checks
    if callee is invoke_closure:
        return CalleeKind.CLOSURE, callee
    return CalleeKind.PYTHON, callee


class _Values:
    """The linked values, each added once."""

    def __init__(self):
        self.values, self.index = [], {}

    def add(self, key, value):
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.values)
            self.values.append(value)
        return found


def _link_args(args, callee_kind, constants, callees, vm, state, values):
    out = []
    for kind, value in args:
        if kind == ArgKind.REG:
            out.append((_REG, value))
            continue
        if kind == ArgKind.IMM:
            key, obj = ("imm", value), value
        elif kind == ArgKind.CONST:
            key, obj = ("const", value), constants[value]
        elif kind == ArgKind.FUNC:
            key, obj = ("func", value), callees[value]
        elif kind == ArgKind.VOID:
            key, obj = ("void",), None
        elif callee_kind == CalleeKind.C:
            key, obj = ("state",), state
        else:
            key, obj = ("vm",), vm
        out.append((_VALUE, values.add(key, obj)))
    return out


# Per opcode code: where each operand kind sits among an instruction's fields (None: absent).
_OPERAND_KINDS = (Operand.DST, Operand.REG, Operand.FUNC, Operand.OFFSET, Operand.ARGS)
_POSITIONS = {op.code: tuple(next((i for i, (_, k) in enumerate(op.operands) if k is kind), None)
                             for kind in _OPERAND_KINDS) for op in OPCODES.values()}
_OP, _DST, _RD, _CALLEE, _TARGET, _NARGS, _FIRST = (
    _FIELD[n] for n in ("op", "dst", "reg", "callee", "target", "nargs", "first_arg"))


def _row(pc, instr, kinds, link_args):
    """The LINKED_FIELDS row of instruction ``pc``; its CALL arguments go to ``link_args``."""
    code, fields = instr.op.code, instr.fields
    dst, reg, func, offset, args = _POSITIONS[code]
    row = [0] * len(LINKED_FIELDS)
    row[_OP] = code
    row[_DST] = VOID_REG if dst is None else fields[dst]
    if reg is not None:
        row[_RD] = fields[reg]
    if func is not None:
        row[_CALLEE] = fields[func]
    if offset is not None:
        row[_TARGET] = pc + fields[offset]
    if args is not None:
        row[_NARGS] = len(fields[args])
        row[_FIRST] = link_args(fields[args], kinds[row[_CALLEE]])
    return tuple(row)


def link(ex, vm, state, callees=None, constants=None):
    """The Linked form of Executable ``ex`` for VirtualMachine ``vm`` whose C state object
    is ``state``; ``callees`` (else resolved here) are the entries of ``resolve``, and
    ``constants`` (else ``ex.constants``) the values constant operands refer to."""
    callees = resolve(ex, vm) if callees is None else list(callees)
    constants = ex.constants if constants is None else constants
    kinds = []
    for i, info in enumerate(ex.func_table):
        kind, callees[i] = classify(info, callees[i])
        kinds.append(kind)
    args, values = [], _Values()

    def link_args(call_args, callee_kind):
        first = len(args)
        args.extend(_link_args(call_args, callee_kind, constants, callees, vm, state, values))
        return first

    code = [_row(pc, instr, kinds, link_args) for pc, instr in enumerate(ex.instructions)]
    return Linked(code, args, values.values, callees, kinds)
