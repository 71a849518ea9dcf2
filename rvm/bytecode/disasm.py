"""Disassembly: one instruction per line, in the vocabulary of the OPCODES table.

``%3`` is register 3, ``i5`` the immediate 5, ``c[2]`` constant 2, ``f[name]`` a
function, ``%void`` the null argument and ``%vm`` the virtual machine state.
"""
from rvm.bytecode.constants import describe_constant
from rvm.bytecode.function import FuncKind
from rvm.bytecode.contract import VOID_REG, ArgKind, Operand


def format_arg(arg, func_names):
    """The text of one CALL argument."""
    kind, value = arg
    if kind == ArgKind.REG:
        return f"%{value}"
    if kind == ArgKind.IMM:
        return f"i{value}"
    if kind == ArgKind.CONST:
        return f"c[{value}]"
    if kind == ArgKind.FUNC:
        name = func_names[value] if 0 <= value < len(func_names) else f"?{value}"
        return f"f[{name}]"
    if kind == ArgKind.VOID:
        return "%void"
    return "%vm"


def format_instruction(instr, pc, func_start, func_names):
    """The text of one instruction at absolute index ``pc`` in a function starting at
    ``func_start``: ``call  test.vm.add  in: %0, %1  dst: %2``."""
    parts = []
    for (_, kind), value in zip(instr.op.operands, instr.fields):
        if kind is Operand.DST:
            parts.append(("dst", "%void" if value == VOID_REG else f"%{value}"))
        elif kind is Operand.REG:
            parts.append(("", f"%{value}"))
        elif kind is Operand.FUNC:
            name = func_names[value] if 0 <= value < len(func_names) else f"?{value}"
            parts.append(("", name))
        elif kind is Operand.ARGS:
            parts.append(("in", ", ".join(format_arg(a, func_names) for a in value)))
        else:
            parts.append(("", f"{value:+d} (-> {pc - func_start + value})"))
    if instr.op.name == "call":  # operands in reading order: callee, inputs, destination
        dst, func, args = parts
        parts = [func, args, dst]
    text = "  ".join(f"{label}: {body}" if label else body for label, body in parts)
    return f"{instr.op.name:<5} {text}".rstrip()


def function_header(info):
    """The header line of a function-table entry."""
    if info.kind == FuncKind.VM:
        params = ", ".join(info.param_names or [f"%{i}" for i in range(info.num_args)])
        return (f"@{info.name}({params}):  # num_args={info.num_args} "
                f"num_regs={info.num_regs}")
    return f"@{info.name} = {info.kind.name.lower()} function"


def describe_module(module):
    """``<type_key>: <its functions>`` of a runtime module, for listings."""
    names = sorted(module.function_names())
    return f"{module.type_key}: {', '.join(names) or 'no functions'}"


def disassemble(ex):
    """The full text of an executable: functions, their code, and the constant pool."""
    names = [f.name for f in ex.func_table]
    lines = []
    for info in ex.func_table:
        if info.kind != FuncKind.VM:
            continue
        lines.append(function_header(info))
        for pc in range(info.start, info.end):
            text = format_instruction(ex.instructions[pc], pc, info.start, names)
            source = ex.source_map.get(pc)
            note = f"  ; {source[0]}:{source[1]}" if source else ""
            lines.append(f"  {pc - info.start:>4}: {text}{note}")
        lines.append("")
    externs = [f for f in ex.func_table if f.kind != FuncKind.VM]
    lines.extend(function_header(f) for f in externs)
    if externs:
        lines.append("")
    modules = [("kernel", m) for m in ex.kernel_libs] + [("import", m) for m in
                                                         ex.imported_modules]
    if modules:
        lines.append("modules:")
        lines.extend(f"  {role} {describe_module(m)}" for role, m in modules)
        lines.append("")
    if ex.constants:
        lines.append("constants:")
        lines.extend(f"  c[{i}] = {describe_constant(v)}" for i, v in enumerate(ex.constants))
    return "\n".join(lines).rstrip() + "\n"


def disassemble_function(ex, func_index, mark_pc=None):
    """The text of one VM function, with ``mark_pc`` (absolute) flagged by ``>>``."""
    info = ex.func_table[func_index]
    names = [f.name for f in ex.func_table]
    lines = [function_header(info)]
    for pc in range(info.start, min(info.end, len(ex.instructions))):
        mark = ">>" if pc == mark_pc else "  "
        text = format_instruction(ex.instructions[pc], pc, info.start, names)
        lines.append(f"{mark}{pc - info.start:>4}: {text}")
    return "\n".join(lines)


def describe_position(ex, func_index, pc, depth=0):
    """Where a VM is, for error notes: function, instruction (disassembled), source binding
    and call depth, at absolute instruction ``pc`` of function ``func_index``."""
    info = ex.func_table[func_index]
    if not info.start <= pc < info.end:
        return f"in VM function '{info.name}'"
    names = [f.name for f in ex.func_table]
    text = format_instruction(ex.instructions[pc], pc, info.start, names)
    source = ex.source_map.get(pc)
    where = f", binding {source[0]}:{source[1]}" if source else ""
    nested = f" (call depth {depth})" if depth else ""
    return f"in VM function '{info.name}', instruction {pc - info.start}: {text}{where}{nested}"
