"""The OPCODES table and the word encoding it drives."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.contract import (
    BY_CODE, CALL, GOTO, IF, IMM_MAX, IMM_MIN, OPCODES, RET, VALUE_MASK, ArgKind, Operand,
)
from rvm.bytecode.instruction import (
    Arg, Instruction, decode_arg, decode_instructions, encode_arg, encode_instruction,
)


def test_table_has_four_opcodes_with_specs():
    assert sorted(OPCODES) == ["call", "goto", "if", "ret"]
    assert len(BY_CODE) == 4
    for op in OPCODES.values():
        assert op.rtl and op.operands
    assert OPCODES["goto"].rtl == "pc += offset"
    assert [kind for _, kind in CALL.operands] == [Operand.DST, Operand.FUNC, Operand.ARGS]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(ArgKind)), st.integers(IMM_MIN, VALUE_MASK))
def test_arg_words_round_trip(kind, value):
    if kind == ArgKind.IMM:
        value = max(IMM_MIN, min(IMM_MAX, value))
    else:
        value = abs(value)
    arg = Arg(kind, value)
    word = encode_arg(arg)
    assert 0 <= word < 1 << 64
    assert decode_arg(word) == arg


def test_out_of_range_values_are_rejected():
    with pytest.raises(ValueError, match="does not fit"):
        encode_arg(Arg(ArgKind.IMM, IMM_MAX + 1))
    with pytest.raises(ValueError, match="out of range"):
        encode_arg(Arg(ArgKind.REG, -1))
    with pytest.raises(ExecutableFormatError, match="unknown kind 9"):
        decode_arg(9 << 56)


def test_instruction_words_follow_the_table():
    call = Instruction(CALL, (2, 0, (Arg(ArgKind.REG, 0), Arg(ArgKind.IMM, -1))))
    words = encode_instruction(call)
    assert words[:4] == [CALL.code, 2, 0, 2]
    program = [call, Instruction(IF, (2, 2)), Instruction(GOTO, (-2,)), Instruction(RET, (2,))]
    flat = [w for i in program for w in encode_instruction(i)]
    assert decode_instructions(flat) == program


@pytest.mark.parametrize("words, reason", [
    ([99], "unknown opcode 99"),
    ([1, 0, 0], "truncated"),
    ([1, 0, 0, 2, 0], "truncated"),
    ([1, 0, 0, -1], "arguments"),
    ([2, "x"], "is a str"),
])
def test_malformed_words_are_format_errors(words, reason):
    with pytest.raises(ExecutableFormatError, match=reason):
        decode_instructions(words)
