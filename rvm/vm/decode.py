"""Pre-decoding: a VM function's instructions as tuples the interpreter loop reads directly.

Callees are taken from the function pool, constants, immediates and the VM
state are placed in argument templates once, jumps become absolute
(function-relative) targets, and a discarded result goes to a scratch register
(index ``num_regs``). Calls whose arguments are all registers get arity-specific
forms.
"""
from rvm.bytecode.disasm import format_instruction
from rvm.bytecode.function import FuncKind
from rvm.bytecode.opcodes import VOID_REG, ArgKind

(OP_CALL0, OP_CALL1, OP_CALL2, OP_CALL3, OP_CALLN, OP_VMCALL, OP_INVOKE, OP_RET, OP_GOTO,
 OP_IF) = range(10)


def _arg_template(args, ex, pool, vm):
    """(template list, ((position, register), ...)) for a CALL's arguments."""
    template, slots = [], []
    for pos, (kind, value) in enumerate(args):
        if kind == ArgKind.REG:
            template.append(None)
            slots.append((pos, value))
        elif kind == ArgKind.IMM:
            template.append(value)
        elif kind == ArgKind.CONST:
            template.append(ex.constants[value])
        elif kind == ArgKind.FUNC:
            template.append(pool[value])
        elif kind == ArgKind.VM_STATE:
            template.append(vm)
        else:
            template.append(None)
    return template, tuple(slots)


def decode_function(ex, index, pool, vm, invoke_builtin, wrap=None):
    """The pre-decoded code of VM function ``index``.

    ``wrap(callee, func_index, position, name)``, if given, replaces each
    packed callee (for profiling and instrumentation).
    """
    info = ex.func_table[index]
    scratch = info.num_regs
    code = []
    for pc in range(info.start, info.end):
        instr = ex.instructions[pc]
        name, rel = instr.op.name, pc - info.start
        if name == "ret":
            code.append((OP_RET, instr.fields[0]))
        elif name == "goto":
            code.append((OP_GOTO, rel + instr.fields[0]))
        elif name == "if":
            code.append((OP_IF, instr.fields[0], rel + instr.fields[1]))
        else:
            dst, func_index, args = instr.fields
            dst = scratch if dst == VOID_REG else dst
            template, slots = _arg_template(args, ex, pool, vm)
            callee_info = ex.func_table[func_index]
            if callee_info.kind == FuncKind.VM:
                code.append((OP_VMCALL, dst, func_index, template, slots))
                continue
            callee = pool[func_index]
            if callee is invoke_builtin and wrap is None:
                code.append((OP_INVOKE, dst, callee, template, slots))
                continue
            if wrap is not None:
                callee = wrap(callee, index, rel, callee_info.name)
            if len(slots) == len(args) and len(args) <= 3:
                regs = tuple(reg for _, reg in slots)
                code.append(((OP_CALL0, OP_CALL1, OP_CALL2, OP_CALL3)[len(args)], dst, callee)
                            + regs)
            else:
                code.append((OP_CALLN, dst, callee, template, slots))
    return code


def describe_position(ex, func_index, rel_pc, depth=0):
    """Where the VM is: function, instruction (disassembled) and source binding."""
    info = ex.func_table[func_index]
    pc = info.start + rel_pc
    if not info.start <= pc < info.end:
        return f"in VM function '{info.name}'"
    names = [f.name for f in ex.func_table]
    text = format_instruction(ex.instructions[pc], pc, info.start, names)
    source = ex.source_map.get(pc)
    where = f", binding {source[0]}:{source[1]}" if source else ""
    nested = f" (call depth {depth})" if depth else ""
    return f"in VM function '{info.name}', instruction {rel_pc}: {text}{where}{nested}"
