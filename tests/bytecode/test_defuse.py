"""Registers written before read on every path: the per-block dataflow of
rvm.bytecode.defuse, against the per-instruction analysis it replaced, and its bounds."""
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rvm.bytecode import defuse
from rvm.bytecode.contract import CALL, GOTO, IF, RET, ArgKind
from rvm.bytecode.defuse import first_undefined_read, reads, writes
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import Arg, Instruction
from rvm.bytecode.verify import MAX_REGS


def reg(i):
    return Arg(ArgKind.REG, i)


def call(dst, *srcs):
    return Instruction(CALL, (dst, 1, tuple(reg(s) for s in srcs)))


def per_instruction(code, num_args):
    """The analysis as it was: one bitset per instruction, then the first bad read."""
    state = [None] * len(code)
    state[0] = (1 << num_args) - 1
    work = [0]
    while work:
        i = work.pop()
        out = state[i]
        for r in writes(code[i]):
            out |= 1 << r
        succs = [] if code[i].op.ends_block else [i + 1]
        if code[i].jump_offset is not None:
            succs.append(i + code[i].jump_offset)
        for s in succs:
            new = out if state[s] is None else state[s] & out
            if new != state[s]:
                state[s] = new
                work.append(s)
    for i, defined in enumerate(state):
        for r in reads(code[i]) if defined is not None else ():
            if not defined >> r & 1:
                return i, r
    return None


def _main(code, num_args=1, num_regs=4):
    return Executable([FuncInfo(FuncKind.VM, "main", 0, len(code), num_args, num_regs, ()),
                       FuncInfo(FuncKind.PACKED, "g")], [], code)


def test_a_register_written_on_one_path_only_is_refused():
    code = [Instruction(IF, (0, 3)),   # 0: if not %0 -> 3
            call(1, 0),                # 1: %1 = g(%0)
            Instruction(GOTO, (2,)),   # 2: -> 4
            call(2, 0),                # 3: %2 = g(%0)   (else: %1 never written)
            Instruction(RET, (1,))]    # 4
    with pytest.raises(BytecodeVerificationError,
                       match=r"function 'main', instruction 4 \(ret   %1\): register %1 is "
                             r"read before it is written on some path"):
        _main(code)
    code[3] = call(1, 0)  # written on both paths
    _main(code)


def test_a_loop_reading_what_its_body_writes_later_is_refused():
    code = [call(1, 0),                # 0: %1 = g(%0)
            call(2, 3),                # 1: %2 = g(%3)   %3 unwritten on the first iteration
            call(3, 1),                # 2: %3 = g(%1)
            Instruction(IF, (2, -2)),  # 3: if not %2 -> 1 (back)
            Instruction(RET, (3,))]
    with pytest.raises(BytecodeVerificationError, match=r"instruction 1 .* %3 is read before"):
        _main(code)
    code[1] = call(2, 1)
    _main(code)


def test_a_jump_back_to_the_entry_meets_the_arguments():
    # %1 is written at 1, then control jumps back to 0 where only %0 was written on entry.
    code = [call(2, 0),                # 0
            call(1, 2),                # 1
            Instruction(IF, (1, -2)),  # 2: back to 0
            Instruction(RET, (1,))]
    _main(code)
    code[0] = call(2, 1)               # 0 now reads %1, unwritten on entry
    with pytest.raises(BytecodeVerificationError, match="instruction 0 .* %1 is read before"):
        _main(code)


def test_unreachable_code_is_not_checked():
    code = [Instruction(RET, (0,)), Instruction(RET, (3,))]
    _main(code)
    assert first_undefined_read(code, 0, 2, 1) is None


_INSTR = st.one_of(
    st.builds(lambda d, a: call(d, *a), st.integers(0, 5), st.lists(st.integers(0, 5),
                                                                     max_size=2)),
    st.builds(lambda r, o: Instruction(IF, (r, o)), st.integers(0, 5), st.integers(-6, 6)),
    st.builds(lambda o: Instruction(GOTO, (o,)), st.integers(-6, 6)),
    st.builds(lambda r: Instruction(RET, (r,)), st.integers(0, 5)),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_INSTR, min_size=1, max_size=14), st.integers(0, 3))
def test_agrees_with_the_per_instruction_analysis(code, num_args):
    n = len(code)
    code = [i if i.jump_offset is None or 0 <= k + i.jump_offset < n
            else i._replace(fields=i.fields[:-1] + (-k,)) for k, i in enumerate(code)]
    code[-1] = Instruction(RET, (0,))
    assert first_undefined_read(code, 0, n, num_args) == per_instruction(code, num_args)
    # the same function placed after others in the code
    pad = [Instruction(RET, (9,))] * 3
    found = first_undefined_read(pad + code, 3, 3 + n, num_args)
    expected = per_instruction(code, num_args)
    assert found == (None if expected is None else (expected[0] + 3, expected[1]))


def test_memory_is_per_block_and_per_register_read_across_blocks():
    # The shape that took a bitset of num_regs bits per instruction: the top register of
    # a MAX_REGS frame written first, then 5,000 blocks each reading it.
    top = MAX_REGS - 1
    code = [call(top, 0)] + [Instruction(IF, (top, 1)) for _ in range(5_000)]
    code.append(Instruction(RET, (top,)))
    tracemalloc.start()
    try:
        assert first_undefined_read(code, 0, len(code), 1) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 800 bytes a block (about 500 are used); the bitset took 5,000 x 128 KB = 655 MB
    assert peak < 4 << 20, peak


def test_blocks_times_registers_over_the_bound_is_refused(monkeypatch):
    code = []
    for k in range(100):  # block k reads what block k-1 wrote: 101 blocks x 100 registers
        # (%1..%100; %0, the argument, is written on entry and needs no bit)
        code += [call(k + 1, k), Instruction(IF, (k + 1, 1))]
    code.append(Instruction(RET, (100,)))
    _main(code, num_regs=101)
    monkeypatch.setattr(defuse, "MAX_FLOW_BITS", 5000)
    with pytest.raises(BytecodeVerificationError,
                       match=r"function 'main': its register dataflow needs 101 blocks x 100 "
                             r"registers read across blocks = 10100 bits, over the limit "
                             r"of 5000"):
        _main(code, num_regs=101)


def test_a_dataflow_that_does_not_settle_is_refused(monkeypatch):
    # A loop of A and B entered at both (irreducible): A is first reached from C with %1
    # written, then again from B without it, so A is visited twice. Code without such
    # loops settles in one visit per block.
    code = [Instruction(IF, (0, 4)),   # 0 E: if not %0 -> 4 (B), else C
            call(1, 0),                # 1 C: %1 = g(%0)
            call(2, 0),                # 2 A
            Instruction(GOTO, (1,)),   # 3 A -> B
            Instruction(IF, (0, -2)),  # 4 B: if not %0 -> 2 (A)
            Instruction(RET, (0,)),    # 5
            Instruction(RET, (1,))]    # 6, unreachable: %1 is tracked
    _main(code)
    monkeypatch.setattr(defuse, "MAX_PASSES", 1)
    with pytest.raises(BytecodeVerificationError,
                       match="did not settle within 1 passes over its 5 reachable blocks"):
        _main(code)
