"""The VM contract: everything the bytecode, the two engines and the C runtime agree on.

It is written once, here. ``native/build_native.py`` generates the C header
``rvm_vm_contract.h`` from this module when the package is built, as Lua's
``lopcodes.h`` serves both its compiler and its VM, so no number or name below
is spelled a second time in C. The module imports only the standard library:
the build loads it before rvm itself can be imported.

- **Run limits.** ``MAX_CALL_DEPTH``, and the step budget of
  ``VirtualMachine(step_limit=...)`` (``STEP_LIMIT_MESSAGE`` says what a step is).
- **Instruction words.** An instruction is its opcode word, then its operands
  in the order ``OPCODES`` gives. A CALL argument is one 64-bit word, an
  ``ArgKind`` in the top 8 bits and a 56-bit value (sign-extended for
  immediates).
- **Opcodes.** ``OPCODES``: code, mnemonic, operand layout and
  register-transfer spec of each; encoding, decoding, the verifier, the
  disassembler and the link step all loop over it.
- **The linked form** both engines execute (``rvm.vm.link``): instructions as
  rows of ``LINKED_FIELDS``, arguments as ``LinkedArg`` pairs, callees
  classified once into a ``CalleeKind``.
- **Shape heap codes** of ``vm.builtin.match_shape`` and ``vm.builtin.make_shape``.
- **The builtins implemented in C** (``C_BUILTINS``): each is registered in
  the global registry as ``rvm_builtin_<name>`` with its argument counts
  checked before it runs, and is the only implementation of that builtin.

>>> OPCODES["call"].rtl
'R[dst] := F[func](args...)'
>>> C_BUILTINS["vm.builtin.copy"].symbol
'rvm_builtin_copy'
"""
import enum
from typing import NamedTuple

# -- instruction words --------------------------------------------------------------------

VALUE_BITS = 56
VALUE_MASK = (1 << VALUE_BITS) - 1
IMM_MIN = -(1 << (VALUE_BITS - 1))
IMM_MAX = (1 << (VALUE_BITS - 1)) - 1
VOID_REG = -1            # a CALL destination that discards the result
MAX_ARGS = 1 << 16       # per CALL; a larger count in a file is a format error
MAX_CALL_DEPTH = 100_000  # VM frames below the entry frame of one run
# VirtualMachine(step_limit=N): a run from Python may take at most N steps, a step being a
# VM-to-VM call (closures of the VM included) or a backward jump; the error both engines raise
# (a RuntimeError) is this text with the limit:
STEP_LIMIT_MESSAGE = ("VM run exceeded its step_limit of %lld steps (VM calls and backward "
                      "jumps): an endless loop or recursion? Pass a larger step_limit to "
                      "VirtualMachine, or None for no limit")


class ArgKind(enum.IntEnum):
    """What the value of a CALL argument word means."""

    REG = 0        # R[value]
    IMM = 1        # the integer value itself
    CONST = 2      # K[value]
    FUNC = 3       # F[value], as a callable
    VOID = 4       # None
    VM_STATE = 5   # the running virtual machine (for builtins that need it)


class Operand(enum.Enum):
    """Operand layouts; each takes one word except ARGS (a count, then one word each)."""

    DST = "dst"        # register written, or VOID_REG
    REG = "reg"        # register read
    FUNC = "func"      # function table index
    ARGS = "args"      # argument list
    OFFSET = "offset"  # relative jump, in instructions


# -- opcodes ------------------------------------------------------------------------------

class Opcode(NamedTuple):
    """An opcode: its code word, mnemonic, operand layout and register-transfer spec."""

    code: int
    name: str
    operands: tuple    # ((field name, Operand), ...)
    rtl: str
    ends_block: bool   # control does not fall through to the next instruction


OPCODES = {op.name: op for op in (
    Opcode(1, "call", (("dst", Operand.DST), ("func", Operand.FUNC), ("args", Operand.ARGS)),
           "R[dst] := F[func](args...)", False),
    Opcode(2, "ret", (("result", Operand.REG),), "return R[result]", True),
    Opcode(3, "goto", (("offset", Operand.OFFSET),), "pc += offset", True),
    Opcode(4, "if", (("cond", Operand.REG), ("offset", Operand.OFFSET)),
           "if not R[cond]: pc += offset (else pc += 1)", False),
)}
BY_CODE = {op.code: op for op in OPCODES.values()}
CALL, RET, GOTO, IF = (OPCODES[n] for n in ("call", "ret", "goto", "if"))

# -- the linked form ----------------------------------------------------------------------

# One row per instruction, int32 fields in this order (the C struct RVMVMLinkedInstr):
LINKED_FIELDS = (
    ("op", "the opcode's code"),
    ("dst", "CALL: register written, or VOID_REG"),
    ("reg", "RET, IF: register read"),
    ("callee", "CALL: function-table index"),
    ("target", "GOTO, IF: absolute instruction index of the jump"),
    ("nargs", "CALL: number of arguments"),
    ("first_arg", "CALL: index of the first argument in the argument table"),
)


class LinkedArg(enum.IntEnum):
    """The kind of a linked argument (a pair: kind, index)."""

    REG = 0     # R[index]
    VALUE = 1   # the executable's linked value ``index`` (immediate, constant, function, state)


class CalleeKind(enum.IntEnum):
    """How a function-table entry is called, decided once by the link step."""

    VM = 0       # bytecode of this executable: a new frame on the VM's stack
    C = 1        # a C packed function (kernels, C builtins): called through its pointer
    PYTHON = 2   # a Python callable
    CLOSURE = 3  # vm.builtin.invoke_closure: a closure of this VM gets a frame, else is called


INVOKE_CLOSURE = "vm.builtin.invoke_closure"

# -- shape heap codes ---------------------------------------------------------------------


class MatchCode(enum.IntEnum):
    """``vm.builtin.match_shape``: what to do with one dimension (code, value pairs)."""

    EQUAL_IMM = 0    # dim == value
    STORE = 1        # heap[value] := dim
    NO_OP = 2        # nothing
    EQUAL_HEAP = 3   # dim == heap[value]
    STORE_SIZE = 4   # heap[value] := dim, a size: refused when negative


class MakeCode(enum.IntEnum):
    """``vm.builtin.make_shape``: where one dimension comes from (code, value pairs)."""

    IMM = 0    # value itself
    LOAD = 1   # heap[value]


# -- builtins implemented in C ------------------------------------------------------------

class CBuiltin(NamedTuple):
    """A builtin whose only implementation is the C function ``symbol``
    (native/src/vm_builtins*.c), registered in the global registry as ``name``;
    calls with fewer than ``min_args`` or more than ``max_args`` arguments
    (None: any number) are refused before it runs."""

    name: str
    min_args: int
    max_args: object
    signature: str

    @property
    def symbol(self):
        return "rvm_builtin_" + self.name.rpartition(".")[2]


C_BUILTINS = {b.name: b for b in (
    CBuiltin("vm.builtin.alloc_storage", 2, 5,
             "(vm, size, device_index=0, dtype_hint=uint8, mem_scope) -> Storage of "
             "prod(size) * itemsize(dtype_hint) bytes from the VM's pool"),
    CBuiltin("vm.builtin.alloc_tensor", 4, 4,
             "(storage, offset, shape, dtype) -> a tensor at byte offset of storage"),
    CBuiltin("vm.builtin.alloc_shape_heap", 2, 2, "(vm, size) -> int64 tensor of size slots"),
    CBuiltin("vm.builtin.null_value", 0, 0, "() -> None"),
    CBuiltin("vm.builtin.copy", 1, 1, "(value) -> value"),
    CBuiltin("vm.builtin.check_tensor_info", 2, 4,
             "(arg, ndim (-1: any), dtype (None or '': any), err_ctx='') -> None"),
    CBuiltin("vm.builtin.check_shape_info", 2, 3, "(arg, ndim (-1: any), err_ctx='') -> None"),
    CBuiltin("vm.builtin.check_tuple_info", 2, 3, "(arg, size (-1: any), err_ctx='') -> None"),
    CBuiltin("vm.builtin.check_prim_value_info", 2, 3,
             "(arg, dtype ('': any scalar), err_ctx='') -> None: a scalar dtype can hold"),
    CBuiltin("vm.builtin.match_shape", 3, None,
             "(value, heap, ndim, code_0, value_0, ..., [err_ctx]) -> None (MatchCode pairs)"),
    CBuiltin("vm.builtin.check_func_info", 1, 2, "(arg, err_ctx='') -> None: arg is callable"),
    CBuiltin("vm.builtin.match_prim_value", 4, 5,
             "(value, heap, code, value, err_ctx='') -> None: one MatchCode pair for an int"),
    CBuiltin("vm.builtin.check_size", 3, None,
             "(heap, slot, err_ctx, name_0, slot_0, ...) -> None: heap[slot], a computed "
             "size, is >= 0 (the error gives the variables name_i = heap[slot_i])"),
    CBuiltin("vm.builtin.make_shape", 2, None,
             "(heap, ndim, code_0, value_0, ...) -> Shape (MakeCode pairs)"),
    CBuiltin("vm.builtin.make_tuple", 0, None, "(fields...) -> Array"),
    CBuiltin("vm.builtin.tuple_getitem", 2, 2, "(tuple or shape, index) -> its field"),
    CBuiltin("vm.builtin.read_if_cond", 1, 1, "(bool, int or one-element tensor) -> bool"),
    CBuiltin("vm.builtin.shape_of", 1, 1, "(tensor) -> its Shape"),
    CBuiltin("vm.builtin.reshape", 2, 2, "(tensor, shape) -> a view of tensor with shape"),
)}
