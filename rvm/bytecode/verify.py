"""The bytecode verifier, run on every built and every loaded executable.

Checks, per VM function: the instruction range is inside the code; register
indices are below ``num_regs``; constant and function indices are in range;
jump targets stay inside the function; control never runs off the end (the
last instruction is RET or GOTO) and there is a RET; every register is
written before it is read on every path; calls to VM functions pass as many
arguments as the callee takes, and calls to the C builtins of the contract as
many as they accept. Resources are bounded: registers per function, and for
functions that may recurse (those on a cycle of calls or closures) the frame
memory the deepest allowed recursion would take; and the instructions checked,
summed over functions (``MAX_CHECKED_INSTRUCTIONS``, or the code's length if
more), so overlapping ranges cannot make the work quadratic. Time and memory are linear in the
executable's size (rvm.bytecode.callgraph, rvm.bytecode.defuse). Errors name
the function and the instruction.
"""
from rvm.bytecode.callgraph import recursive_functions
from rvm.bytecode.defuse import DataflowTooLarge, first_undefined_read
from rvm.bytecode.disasm import format_instruction
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.function import FuncKind
from rvm.bytecode.contract import MAX_CALL_DEPTH, C_BUILTINS, VOID_REG, ArgKind, Operand

MAX_REGS = 1 << 20
# Instructions checked per executable, counted once for each VM function whose range covers
# them, at most this or the number of instructions, whichever is more: ranges may overlap,
# and without this bound a table of many functions each covering the whole code would make
# verifying quadratic in the file's size. Disjoint ranges always pass.
MAX_CHECKED_INSTRUCTIONS = 1 << 16
# Register frames of recursive functions at MAX_CALL_DEPTH may take at most this many bytes
# (a register is a 16-byte value in either engine's frame stack).
FRAME_MEMORY_BUDGET = 1 << 30
REGISTER_BYTES = 16


class _Checker:
    def __init__(self, ex, func_index):
        self.ex = ex
        self.info = ex.func_table[func_index]

    def fail(self, pc, problem):
        info = self.info
        if pc is None:
            err = BytecodeVerificationError(f"function '{info.name}': {problem}")
        else:
            names = [f.name for f in self.ex.func_table]
            text = format_instruction(self.ex.instructions[pc], pc, info.start, names)
            err = BytecodeVerificationError(
                f"function '{info.name}', instruction {pc - info.start} ({text}): {problem}")
        err.pc = pc
        raise err

    def check_header(self):
        info, count = self.info, len(self.ex.instructions)
        if not 0 <= info.num_args <= info.num_regs <= MAX_REGS:
            self.fail(None, f"expected 0 <= num_args <= num_regs <= {MAX_REGS}, found "
                            f"num_args={info.num_args}, num_regs={info.num_regs}")
        if info.param_names and len(info.param_names) != info.num_args:
            self.fail(None, f"{len(info.param_names)} parameter names for "
                            f"{info.num_args} arguments")
        if not 0 <= info.start <= info.end <= count:
            self.fail(None, f"code range [{info.start}, {info.end}) is outside the "
                            f"{count} instructions of the executable")
        if info.start == info.end:
            self.fail(None, "has no instructions (every function must end in RET)")

    def check_register(self, pc, reg, what):
        if not 0 <= reg < self.info.num_regs:
            self.fail(pc, f"{what} register %{reg} out of range: expected 0 <= reg < "
                          f"num_regs={self.info.num_regs}")

    def check_instruction(self, pc):
        info, ex = self.info, self.ex
        instr = ex.instructions[pc]
        for (name, kind), value in zip(instr.op.operands, instr.fields):
            if kind is Operand.DST and value != VOID_REG:
                self.check_register(pc, value, "destination")
            elif kind is Operand.REG:
                self.check_register(pc, value, name)
            elif kind is Operand.FUNC:
                if not 0 <= value < len(ex.func_table):
                    self.fail(pc, f"function index {value} out of range: the table has "
                                  f"{len(ex.func_table)} functions")
            elif kind is Operand.OFFSET:
                if not info.start <= pc + value < info.end:
                    self.fail(pc, f"jump target {pc - info.start + value} is outside the "
                                  f"function (instructions 0..{info.end - info.start - 1})")
            elif kind is Operand.ARGS:
                self.check_args(pc, value)
        if instr.op.name == "call":
            callee = ex.func_table[instr.field("func")]
            nargs = len(instr.field("args"))
            if callee.kind == FuncKind.VM and nargs != callee.num_args:
                self.fail(pc, f"VM function '{callee.name}' takes {callee.num_args} "
                              f"arguments, the call passes {nargs}")
            builtin = C_BUILTINS.get(callee.name) if callee.kind == FuncKind.PACKED else None
            if builtin is not None and not (builtin.min_args <= nargs and (
                    builtin.max_args is None or nargs <= builtin.max_args)):
                most = "any number" if builtin.max_args is None else builtin.max_args
                self.fail(pc, f"builtin '{callee.name}' takes {builtin.min_args} to {most} "
                              f"arguments, the call passes {nargs}")

    def check_args(self, pc, args):
        ex = self.ex
        for arg in args:
            if arg.kind == ArgKind.REG:
                self.check_register(pc, arg.value, "argument")
            elif arg.kind == ArgKind.CONST and not 0 <= arg.value < len(ex.constants):
                self.fail(pc, f"constant index {arg.value} out of range: the pool has "
                              f"{len(ex.constants)} constants")
            elif arg.kind == ArgKind.FUNC and not 0 <= arg.value < len(ex.func_table):
                self.fail(pc, f"function index {arg.value} out of range: the table has "
                              f"{len(ex.func_table)} functions")

    def check_control(self):
        info, instrs = self.info, self.ex.instructions
        last = instrs[info.end - 1]
        if not last.op.ends_block:
            self.fail(info.end - 1, "control runs off the end of the function: the last "
                                    "instruction must be RET or GOTO")
        if not any(instrs[pc].op.name == "ret" for pc in range(info.start, info.end)):
            self.fail(None, "has no RET instruction")

    def check_defined_before_use(self):
        """Every register is written before it is read on every path (rvm.bytecode.defuse)."""
        info = self.info
        try:
            found = first_undefined_read(self.ex.instructions, info.start, info.end,
                                         info.num_args)
        except DataflowTooLarge as err:
            self.fail(None, str(err))
        if found is not None:
            pc, reg = found
            self.fail(pc, f"register %{reg} is read before it is written on some path")


def verify_function(ex, func_index):
    """Checks one function-table entry; BytecodeVerificationError on the first failure."""
    info = ex.func_table[func_index]
    if info.kind != FuncKind.VM:
        if not info.name:
            raise BytecodeVerificationError(f"function {func_index}: empty name")
        return
    checker = _Checker(ex, func_index)
    checker.check_header()
    for pc in range(info.start, info.end):
        checker.check_instruction(pc)
    checker.check_control()
    checker.check_defined_before_use()


def check_frame_budget(ex):
    """Refuses recursive functions whose frames at the call-depth limit exceed the budget."""
    most = FRAME_MEMORY_BUDGET // (MAX_CALL_DEPTH * REGISTER_BYTES)
    for index in sorted(recursive_functions(ex)):
        info = ex.func_table[index]
        if info.num_regs > most:
            raise BytecodeVerificationError(
                f"function '{info.name}': may recurse with {info.num_regs} registers per "
                f"frame; recursive functions may have at most {most} (frames at the call depth "
                f"limit {MAX_CALL_DEPTH} may take {FRAME_MEMORY_BUDGET} bytes)")


def verify_executable(ex):
    """Checks every function of ``ex``, the uniqueness of function names, the frame
    memory of recursive functions, and bounds the work: the functions' ranges may cover
    at most MAX_CHECKED_INSTRUCTIONS instructions in all, or the number of instructions if
    that is more."""
    covered = sum(max(0, f.end - f.start) for f in ex.func_table if f.kind == FuncKind.VM)
    most = max(MAX_CHECKED_INSTRUCTIONS, len(ex.instructions))
    if covered > most:
        raise BytecodeVerificationError(
            f"the VM functions' code ranges cover {covered} instructions in all, over the "
            f"limit of {most} (an instruction counts once per function whose range holds it)")
    seen = set()
    for index, info in enumerate(ex.func_table):
        if info.name in seen:
            raise BytecodeVerificationError(f"function {index}: name '{info.name}' is "
                                            f"defined twice in the function table")
        seen.add(info.name)
        verify_function(ex, index)
    check_frame_budget(ex)
    for pc in ex.source_map:
        if not 0 <= pc < len(ex.instructions):
            raise BytecodeVerificationError(f"source map: instruction {pc} is out of range "
                                            f"(the code has {len(ex.instructions)})")
