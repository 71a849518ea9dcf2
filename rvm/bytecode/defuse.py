"""Registers written before they are read, on every path: a must-be-written dataflow over
the basic blocks of one VM function.

Memory and time stay linear in the function's size for the code compilers produce:

- one state per basic block, not per instruction, held as a Python int bitset;
- the bitsets have one bit per *tracked* register only: a register, other than
  the arguments (written on entry), read before any write inside some block.
  Every other read follows a write in its own block and is defined whatever the
  path;
- blocks are visited from a worklist in reverse postorder, so code without back
  jumps settles in one visit per block.

What a hostile function could still make large is refused, not computed: more
than ``MAX_FLOW_BITS`` bits of block state (blocks x tracked registers), or more
than ``MAX_PASSES`` visits per block on average (back jumps nested that deep).

>>> from rvm.bytecode.contract import RET
>>> from rvm.bytecode.instruction import Instruction
>>> first_undefined_read([Instruction(RET, (1,))], 0, 1, num_args=1)
(0, 1)
"""
import heapq

from rvm.bytecode.contract import CALL, VOID_REG, ArgKind, Operand

MAX_FLOW_BITS = 1 << 27
MAX_PASSES = 8


class DataflowTooLarge(Exception):
    """The function's dataflow exceeds a bound; the message says which."""


def reads(instr):
    """Registers an instruction reads, in operand order."""
    out = []
    for (_, kind), value in zip(instr.op.operands, instr.fields):
        if kind is Operand.REG:
            out.append(value)
        elif kind is Operand.ARGS:
            out.extend(a.value for a in value if a.kind == ArgKind.REG)
    return out


def writes(instr):
    """Registers an instruction writes."""
    return [v for (_, kind), v in zip(instr.op.operands, instr.fields)
            if kind is Operand.DST and v != VOID_REG]


def _bitset(bits, width):
    """The int with ``bits`` set, built in time linear in ``width`` bits plus len(bits)."""
    buf = bytearray((width + 7) >> 3)
    for bit in bits:
        buf[bit >> 3] |= 1 << (bit & 7)
    return int.from_bytes(buf, "little")


def _blocks(instrs, start, end):
    """(block starts, successor block lists), function-relative; block 0 is the entry."""
    size = end - start
    leader = bytearray(size + 1)
    leader[0] = 1
    for i in range(size):
        instr = instrs[start + i]
        offset = instr.jump_offset
        if offset is not None:
            leader[i + offset] = 1
        if offset is not None or instr.op.ends_block:
            leader[i + 1] = 1
    starts = [i for i in range(size) if leader[i]]
    block_at = {s: b for b, s in enumerate(starts)}
    succs = []
    for b, s in enumerate(starts):
        last = (starts[b + 1] if b + 1 < len(starts) else size) - 1
        instr = instrs[start + last]
        out = [] if instr.op.ends_block else [last + 1]
        if instr.jump_offset is not None:
            out.append(last + instr.jump_offset)
        succs.append([block_at[t] for t in out if t < size])
    return starts, succs


def _reverse_postorder(succs):
    """Block indices reachable from block 0, in reverse postorder (iterative DFS)."""
    seen = bytearray(len(succs))
    seen[0] = 1
    post, work = [], [(0, iter(succs[0]))]
    while work:
        node, it = work[-1]
        for succ in it:
            if not seen[succ]:
                seen[succ] = 1
                work.append((succ, iter(succs[succ])))
                break
        else:
            work.pop()
            post.append(node)
    post.reverse()
    return post


def _straight_line(instrs, start, end, num_args):
    """first_undefined_read for a function of one block: one pass, a set of writes."""
    here = set()
    for pc in range(start, end):
        instr = instrs[pc]
        for reg in reads(instr):
            if reg >= num_args and reg not in here:
                return pc, reg
        here.update(writes(instr))
    return None


def first_undefined_read(instrs, start, end, num_args):
    """(absolute pc, register) of the first read, in code order, of a register that some
    path from the entry reaches unwritten; None if there is none. Only instructions
    reachable from the entry are considered. Registers below ``num_args`` are written on
    entry. DataflowTooLarge if the analysis would exceed its bounds."""
    if all(instrs[pc].op is CALL for pc in range(start, end - 1)):
        return _straight_line(instrs, start, end, num_args)  # one block: no jump, no early RET
    starts, succs = _blocks(instrs, start, end)
    bounds = starts[1:] + [end - start]
    exposed, written = [], []
    for s, e in zip(starts, bounds):
        here, seen = set(), []
        for pc in range(start + s, start + e):
            instr = instrs[pc]
            seen.extend(r for r in reads(instr) if r >= num_args and r not in here)
            here.update(writes(instr))
        exposed.append(seen)
        written.append(here)
    tracked = {}
    for regs in exposed:
        for reg in regs:
            tracked.setdefault(reg, len(tracked))
    if not tracked:
        return None
    if len(starts) * len(tracked) > MAX_FLOW_BITS:
        raise DataflowTooLarge(
            f"its register dataflow needs {len(starts)} blocks x {len(tracked)} registers "
            f"read across blocks = {len(starts) * len(tracked)} bits, over the limit of "
            f"{MAX_FLOW_BITS}")
    width = len(tracked)
    gen = [_bitset([tracked[r] for r in regs if r in tracked], width) for regs in written]
    del written
    state = [None] * len(starts)
    state[0] = 0
    order = _reverse_postorder(succs)
    rank = {b: k for k, b in enumerate(order)}
    work, queued, visits = [0], {0}, 0
    while work:
        b = order[heapq.heappop(work)]
        queued.discard(b)
        visits += 1
        if visits > MAX_PASSES * len(order):
            raise DataflowTooLarge(
                f"its register dataflow did not settle within {MAX_PASSES} passes over its "
                f"{len(order)} reachable blocks (back jumps nested too deep)")
        out = state[b] | gen[b]
        for succ in succs[b]:
            old = state[succ]
            new = out if old is None else old & out
            if new != old:
                state[succ] = new
                if succ not in queued:
                    queued.add(succ)
                    heapq.heappush(work, rank[succ])
    for b, (s, e) in enumerate(zip(starts, bounds)):
        if state[b] is None or not exposed[b]:
            continue  # unreachable, or every read follows a write in the block
        # Bytes, so that testing a bit costs O(1) rather than O(width).
        entry = state[b].to_bytes((width + 7) >> 3, "little")
        here = set()
        for pc in range(start + s, start + e):
            instr = instrs[pc]
            for reg in reads(instr):
                bit = tracked.get(reg)
                if bit is not None and reg not in here and not entry[bit >> 3] >> (bit & 7) & 1:
                    return pc, reg
            here.update(writes(instr))
    return None
