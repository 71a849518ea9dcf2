"""The verifier's checks, on executables assembled directly (bypassing the builder)."""
import pytest

from rvm.bytecode.contract import CALL, GOTO, IF, RET, ArgKind
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import Arg, Instruction


def reg(i):
    return Arg(ArgKind.REG, i)


def _make(code, num_args=1, num_regs=2, extra=(), constants=()):
    table = [FuncInfo(FuncKind.VM, "main", 0, len(code), num_args, num_regs, ()),
             FuncInfo(FuncKind.PACKED, "g")] + list(extra)
    return Executable(table, constants, code)


def test_valid_program_passes():
    ex = _make([Instruction(CALL, (1, 1, (reg(0), Arg(ArgKind.IMM, 3)))),
                Instruction(IF, (1, 2)),
                Instruction(GOTO, (-2,)),
                Instruction(RET, (1,))])
    assert len(ex.instructions) == 4


@pytest.mark.parametrize("code, num_regs, reason", [
    ([Instruction(RET, (2,))], 2, r"result register %2 out of range: expected 0 <= reg < "
                                  r"num_regs=2"),
    ([Instruction(CALL, (5, 1, ())), Instruction(RET, (0,))], 2, "destination register %5"),
    ([Instruction(CALL, (1, 1, (reg(9),))), Instruction(RET, (1,))], 2, "argument register %9"),
    ([Instruction(CALL, (1, 7, ())), Instruction(RET, (1,))], 2, "function index 7 out of "
                                                                 "range"),
    ([Instruction(CALL, (1, 1, (Arg(ArgKind.FUNC, 9),))), Instruction(RET, (1,))], 2,
     "function index 9"),
    ([Instruction(CALL, (1, 1, (Arg(ArgKind.CONST, 0),))), Instruction(RET, (1,))], 2,
     "constant index 0 out of range: the pool has 0"),
    ([Instruction(GOTO, (2,)), Instruction(RET, (0,))], 2, "jump target 2 is outside"),
    ([Instruction(IF, (0, -1)), Instruction(RET, (0,))], 2, "jump target -1 is outside"),
    ([Instruction(CALL, (1, 1, ()))], 2, "control runs off the end"),
    ([Instruction(GOTO, (0,))], 2, "has no RET"),
    ([Instruction(RET, (1,))], 2, "%1 is read before it is written"),
    ([], 2, "has no instructions"),
    ([Instruction(RET, (0,))], 0, "num_args <= num_regs"),
])
def test_each_check_names_function_and_instruction(code, num_regs, reason):
    with pytest.raises(BytecodeVerificationError, match=reason) as info:
        _make(code, num_regs=num_regs)
    assert "function 'main'" in str(info.value)


def test_loop_with_definition_inside_is_accepted_after_it():
    # %1 is written in the loop body before the back edge; the read after the loop
    # comes only from the path through the body.
    code = [Instruction(CALL, (1, 1, (reg(0),))),   # 0: %1 = g(%0)
            Instruction(IF, (1, 2)),                # 1: if not %1 -> 3
            Instruction(GOTO, (-2,)),               # 2: -> 0
            Instruction(RET, (1,))]                 # 3
    _make(code)


def test_vm_call_arity_is_checked():
    callee = FuncInfo(FuncKind.VM, "h", 2, 3, 2, 2, ())
    code = [Instruction(CALL, (1, 2, (reg(0),))), Instruction(RET, (1,)),
            Instruction(RET, (0,))]
    with pytest.raises(BytecodeVerificationError, match="'h' takes 2 arguments, the call "
                                                        "passes 1"):
        _make(code, extra=[callee])


def test_builtin_call_arity_is_checked_from_the_contract():
    copy = FuncInfo(FuncKind.PACKED, "vm.builtin.copy")
    code = [Instruction(CALL, (1, 2, (reg(0), reg(0)))), Instruction(RET, (1,))]
    with pytest.raises(BytecodeVerificationError, match="builtin 'vm.builtin.copy' takes 1 to 1 "
                                                        "arguments, the call passes 2"):
        _make(code, extra=[copy])
    shape = FuncInfo(FuncKind.PACKED, "vm.builtin.match_shape")
    code = [Instruction(CALL, (1, 2, (reg(0),))), Instruction(RET, (1,))]
    with pytest.raises(BytecodeVerificationError, match="takes 3 to any number arguments"):
        _make(code, extra=[shape])
    code = [Instruction(CALL, (1, 2, (reg(0),))), Instruction(RET, (1,))]
    _make(code, extra=[copy])


def test_duplicate_names_and_bad_ranges():
    table = [FuncInfo(FuncKind.VM, "main", 0, 1, 1, 1), FuncInfo(FuncKind.PACKED, "main")]
    with pytest.raises(BytecodeVerificationError, match="defined twice"):
        Executable(table, [], [Instruction(RET, (0,))])
    table = [FuncInfo(FuncKind.VM, "main", 0, 4, 1, 1)]
    with pytest.raises(BytecodeVerificationError, match="outside the 1 instructions"):
        Executable(table, [], [Instruction(RET, (0,))])
    with pytest.raises(BytecodeVerificationError, match="source map"):
        Executable([FuncInfo(FuncKind.VM, "main", 0, 1, 1, 1)], [], [Instruction(RET, (0,))],
                   source_map={3: ("main", "x")})
