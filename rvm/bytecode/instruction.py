"""Instructions and their words, in the layout the OPCODES table of rvm.bytecode.contract
gives: encoding, decoding, and the decoded form (Instruction) the rest of the package uses.

>>> decode_arg(encode_arg(Arg(ArgKind.IMM, -3)))
Arg(IMM, -3)
>>> encode_instruction(Instruction(RET, (0,)))
[2, 0]
"""
from typing import NamedTuple

from rvm.bytecode.contract import (
    BY_CODE, IMM_MAX, IMM_MIN, MAX_ARGS, RET, VALUE_BITS, VALUE_MASK, ArgKind, Opcode, Operand,
)
from rvm.bytecode.errors import ExecutableFormatError

_NUM_KINDS = len(ArgKind)


class Arg(NamedTuple):
    """One argument of a CALL: a kind and a value."""

    kind: ArgKind
    value: int

    def __repr__(self):
        return f"Arg({self.kind.name}, {self.value})"


class Instruction(NamedTuple):
    """A decoded instruction: its Opcode and operand values in table order.

    The value of an ARGS operand is a tuple of Arg.
    """

    op: Opcode
    fields: tuple

    def field(self, name):
        for (fname, _), value in zip(self.op.operands, self.fields):
            if fname == name:
                return value
        raise KeyError(f"opcode '{self.op.name}' has no operand '{name}'")

    @property
    def jump_offset(self):
        """The relative jump of GOTO/IF, None for other opcodes."""
        for (_, kind), value in zip(self.op.operands, self.fields):
            if kind is Operand.OFFSET:
                return value
        return None


def encode_arg(arg):
    """The 64-bit word of an Arg."""
    kind, value = ArgKind(arg.kind), int(arg.value)
    if kind is ArgKind.IMM:
        if not IMM_MIN <= value <= IMM_MAX:
            raise ValueError(f"immediate {value} does not fit in {VALUE_BITS} bits "
                             f"[{IMM_MIN}, {IMM_MAX}]; put it in the constant pool")
    elif not 0 <= value <= VALUE_MASK:
        raise ValueError(f"{kind.name.lower()} argument index {value} out of range")
    return (int(kind) << VALUE_BITS) | (value & VALUE_MASK)


def decode_arg(word):
    """The Arg of a word; ExecutableFormatError for an unknown kind."""
    if not 0 <= word < (1 << 64):
        raise ExecutableFormatError(f"argument word {word} is not a 64-bit unsigned value")
    kind, value = word >> VALUE_BITS, word & VALUE_MASK
    if kind >= _NUM_KINDS:
        raise ExecutableFormatError(f"argument word {word:#x} has unknown kind {kind}; "
                                    f"expected 0..{len(ArgKind) - 1}")
    kind = ArgKind(kind)
    if kind is ArgKind.IMM and value > IMM_MAX:
        value -= 1 << VALUE_BITS
    return Arg(kind, value)


def encode_instruction(instr):
    """The words of an Instruction (opcode first)."""
    words = [instr.op.code]
    for (_, kind), value in zip(instr.op.operands, instr.fields):
        if kind is Operand.ARGS:
            words.append(len(value))
            words.extend(encode_arg(a) for a in value)
        else:
            words.append(int(value))
    return words


def decode_instructions(words):
    """Decodes a flat word list into Instructions; ExecutableFormatError if malformed."""
    out = []
    pos, n = 0, len(words)

    def take(what):
        nonlocal pos
        if pos >= n:
            raise ExecutableFormatError(
                f"code: instruction {len(out)} is truncated (missing {what} at word {pos})")
        word = words[pos]
        if type(word) is not int:
            raise ExecutableFormatError(
                f"code: word {pos} is a {type(word).__name__}, expected an int")
        pos += 1
        return word

    while pos < n:
        code = take("opcode")
        op = BY_CODE.get(code)
        if op is None:
            raise ExecutableFormatError(
                f"code: instruction {len(out)} (word {pos - 1}) has unknown opcode {code}; "
                f"expected one of {sorted(BY_CODE)}")
        fields = []
        for name, kind in op.operands:
            if kind is Operand.ARGS:
                count = take("argument count")
                if not 0 <= count <= MAX_ARGS:
                    raise ExecutableFormatError(
                        f"code: instruction {len(out)} has {count} arguments; "
                        f"expected 0..{MAX_ARGS}")
                fields.append(tuple(decode_arg(take("argument")) for _ in range(count)))
            else:
                fields.append(take(name))
        out.append(Instruction(op, tuple(fields)))
    return out
