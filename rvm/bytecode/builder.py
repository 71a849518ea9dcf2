"""ExecBuilder: the low-level emitter of bytecode, checked before it hands out an Executable.

>>> ib = ExecBuilder()
>>> with ib.function("twice", num_inputs=1):
...     _ = ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(0)], dst=ib.r(1))
...     _ = ib.emit_ret(ib.r(1))
>>> print(ib.get().as_text().splitlines()[1])
     0: call  test.vm.add  in: %0, %0  dst: %1
"""
import contextlib
import operator

import numpy as np

from rvm.bytecode.constants import constant_key, encode_constant
from rvm.bytecode.disasm import disassemble_function
from rvm.bytecode.errors import BytecodeVerificationError
from rvm.bytecode.executable import Executable
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.contract import CALL, GOTO, IF, IMM_MAX, IMM_MIN, RET, VOID_REG, ArgKind
from rvm.bytecode.instruction import Arg, Instruction
from rvm.bytecode.verify import verify_function
from rvm.runtime.container import ShapeTuple
from rvm.runtime.module import Module
from rvm.runtime.ndarray import NDArray, array


class Label:
    """A jump target inside the current function, bound later with ``ExecBuilder.bind``."""

    __slots__ = ("target", "pending")

    def __init__(self):
        self.target = None   # function-relative instruction index once bound
        self.pending = []    # function-relative indices of jumps waiting for it


class _Function:
    __slots__ = ("kind", "name", "start", "end", "num_args", "num_regs", "param_names",
                 "labels", "defined")

    def __init__(self, kind, name):
        self.kind, self.name = kind, name
        self.start = self.end = self.num_args = self.num_regs = 0
        self.param_names = ()
        self.labels = []
        self.defined = False

    def info(self):
        return FuncInfo(self.kind, self.name, self.start, self.end, self.num_args,
                        self.num_regs, tuple(self.param_names))


class ExecBuilder:
    """Builds an Executable one function and one instruction at a time.

    Jumps take a relative offset (in instructions) or a Label, backpatched when
    the label is bound. ``get()`` verifies everything emitted and rejects, with
    the function's disassembly, reads of unwritten registers and indices out of
    range.
    """

    def __init__(self):
        self._funcs = []
        self._func_map = {}
        self._constants = []
        self._const_index = {}
        self._instrs = []
        self._source_map = {}
        self._source = None
        self._current = None
        self._kernel_libs = []
        self._imports = []

    # -- arguments -------------------------------------------------------------------------

    @staticmethod
    def r(index):
        """Register argument ``%index``."""
        return Arg(ArgKind.REG, operator.index(index))

    @staticmethod
    def imm(value):
        """Immediate integer argument (56-bit signed; larger values belong in constants)."""
        value = operator.index(value)
        if not IMM_MIN <= value <= IMM_MAX:
            raise ValueError(f"immediate {value} out of range [{IMM_MIN}, {IMM_MAX}]; "
                             f"use ib.c(ib.convert_constant({value}))")
        return Arg(ArgKind.IMM, value)

    @staticmethod
    def c(index):
        """Constant-pool argument ``c[index]`` (an index from ``convert_constant``)."""
        return Arg(ArgKind.CONST, operator.index(index))

    def f(self, name):
        """Function argument: the function ``name`` as a value (declared if unknown)."""
        return Arg(ArgKind.FUNC, self._ensure_function(name, FuncKind.PACKED))

    @staticmethod
    def void_arg():
        """The null argument."""
        return Arg(ArgKind.VOID, 0)

    @staticmethod
    def vm_state():
        """The running virtual machine, for builtins that need it (allocation, closures)."""
        return Arg(ArgKind.VM_STATE, 0)

    def convert_constant(self, value):
        """The pool index of ``value`` (added once; equal values share an index)."""
        if isinstance(value, np.ndarray):
            value = array(value)
        elif isinstance(value, np.generic):
            value = value.item()
        elif isinstance(value, (list, tuple)) and not isinstance(value, ShapeTuple):
            raise TypeError("convert_constant: lists and tuples are ambiguous; pass a "
                            "ShapeTuple or a numpy array")
        key = constant_key(value)
        index = self._const_index.get(key)
        if index is None:
            encode_constant(value)  # rejects values the file format cannot hold
            if isinstance(value, NDArray):
                value = array(value)  # the pool owns a private copy
            index = len(self._constants)
            self._constants.append(value)
            self._const_index[key] = index
        return index

    # -- functions -------------------------------------------------------------------------

    def _ensure_function(self, name, kind):
        if not isinstance(name, str) or not name:
            raise TypeError(f"function names must be non-empty strings, got {name!r}")
        index = self._func_map.get(name)
        if index is None:
            index = len(self._funcs)
            self._funcs.append(_Function(kind, name))
            self._func_map[name] = index
        return index

    def declare_function(self, name, kind=FuncKind.PACKED):
        """Declares ``name`` ahead of use (a later ``function(name)`` makes it a VM function)."""
        kind = FuncKind[kind.upper()] if isinstance(kind, str) else FuncKind(kind)
        index = self._ensure_function(name, kind)
        func = self._funcs[index]
        if not func.defined:
            func.kind = kind
        return index

    @contextlib.contextmanager
    def function(self, func_name, num_inputs=0, param_names=None):
        """Scope in which instructions go to VM function ``func_name``; inputs are %0..%n-1."""
        if self._current is not None:
            raise RuntimeError(f"function('{func_name}') inside function "
                               f"'{self._current.name}': functions do not nest")
        index = self._ensure_function(func_name, FuncKind.VM)
        func = self._funcs[index]
        if func.defined:
            raise ValueError(f"function '{func_name}' is defined twice")
        params = tuple(param_names) if param_names is not None else ()
        if params and len(params) != num_inputs:
            raise ValueError(f"function '{func_name}': {len(params)} param_names for "
                             f"{num_inputs} inputs")
        func.kind, func.num_args, func.num_regs = FuncKind.VM, num_inputs, num_inputs
        func.param_names, func.start, func.labels = params, len(self._instrs), []
        func.defined = True
        self._current = func
        try:
            yield
            func.end = len(self._instrs)
            for label in func.labels:
                if label.pending:
                    raise ValueError(f"function '{func_name}': a label used by jumps at "
                                     f"{label.pending} was never bound")
        finally:
            self._current = None

    def _func(self, what):
        if self._current is None:
            raise RuntimeError(f"{what} outside a 'with ib.function(...)' scope")
        return self._current

    def _reg(self, value, what):
        if isinstance(value, Arg):
            if value.kind != ArgKind.REG:
                raise TypeError(f"{what} must be a register, got {value}")
            value = value.value
        value = operator.index(value)
        func = self._current
        func.num_regs = max(func.num_regs, value + 1)
        return value

    def _arg(self, value):
        if isinstance(value, Arg):
            if value.kind == ArgKind.REG:
                self._reg(value, "argument")
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            if IMM_MIN <= int(value) <= IMM_MAX:
                return self.imm(value)
        return self.c(self.convert_constant(value))

    def _emit(self, instr):
        pc = len(self._instrs)
        self._instrs.append(instr)
        if self._source is not None:
            self._source_map[pc] = self._source
        return pc - self._current.start

    # -- instructions ----------------------------------------------------------------------

    def emit_call(self, name, args=None, dst=None):
        """``R[dst] := F[name](args...)``; dst None discards the result.

        Arguments that are not Args become immediates (small ints) or constants.
        """
        self._func("emit_call")
        func_index = self._ensure_function(name, FuncKind.PACKED)
        args = tuple(self._arg(a) for a in (args or ()))
        dst = VOID_REG if dst is None else self._reg(dst, "dst")
        return self._emit(Instruction(CALL, (dst, func_index, args)))

    def emit_ret(self, result):
        """``return R[result]``."""
        self._func("emit_ret")
        return self._emit(Instruction(RET, (self._reg(result, "ret"),)))

    def _offset(self, target, func):
        if isinstance(target, Label):
            if target.target is None:
                target.pending.append(len(self._instrs) - func.start)
                if target not in func.labels:
                    func.labels.append(target)
                return 0
            return target.target - (len(self._instrs) - func.start)
        return operator.index(target)

    def emit_goto(self, pc_offset):
        """``pc += pc_offset``: an int or a Label. Returns the instruction's position."""
        func = self._func("emit_goto")
        return self._emit(Instruction(GOTO, (self._offset(pc_offset, func),)))

    def emit_if(self, cond, false_offset):
        """``if not R[cond]: pc += false_offset`` (an int or a Label); else falls through."""
        func = self._func("emit_if")
        cond = self._reg(cond, "cond")
        return self._emit(Instruction(IF, (cond, self._offset(false_offset, func))))

    def label(self):
        """A new Label for forward or backward jumps in the current function."""
        return Label()

    def bind(self, label):
        """Binds ``label`` to the next instruction position and backpatches its jumps."""
        func = self._func("bind")
        here = len(self._instrs) - func.start
        if label.target is not None:
            raise ValueError(f"label already bound to instruction {label.target}")
        label.target = here
        for pos in label.pending:
            self.patch(pos, here - pos)
        label.pending.clear()

    def patch(self, position, offset):
        """Sets the jump offset of the GOTO/IF at ``position`` in the current function."""
        func = self._func("patch")
        pc = func.start + position
        instr = self._instrs[pc]
        if instr.jump_offset is None:
            raise ValueError(f"instruction {position} is a {instr.op.name}, not a jump")
        fields = instr.fields[:-1] + (operator.index(offset),)
        self._instrs[pc] = Instruction(instr.op, fields)

    def current_position(self):
        """The position the next instruction will take in the current function."""
        return len(self._instrs) - self._func("current_position").start

    def set_source(self, relax_func, binding):
        """Tags the next instructions with their origin (Relax function, binding name).

        ``set_source(None, None)`` stops tagging.
        """
        self._source = None if relax_func is None else (str(relax_func), str(binding))

    # -- modules and result ----------------------------------------------------------------

    def add_kernel_library(self, module):
        """Attaches a kernel library (searched first when the VM resolves callees)."""
        if not isinstance(module, Module):
            raise TypeError(f"add_kernel_library expects a Module, got {type(module).__name__}")
        self._kernel_libs.append(module)

    def import_module(self, module):
        """Attaches another runtime module (searched after the kernel libraries)."""
        if not isinstance(module, Module):
            raise TypeError(f"import_module expects a Module, got {type(module).__name__}")
        self._imports.append(module)

    def get(self):
        """The verified Executable; BytecodeVerificationError with the disassembly if not."""
        if self._current is not None:
            raise RuntimeError(f"get() inside function '{self._current.name}'")
        for func in self._funcs:
            if func.kind == FuncKind.VM and not func.defined:
                raise ValueError(f"VM function '{func.name}' was declared but never defined")
        ex = Executable([f.info() for f in self._funcs], self._constants, self._instrs,
                        self._source_map, self._kernel_libs, self._imports, verify=False)
        for index in range(len(ex.func_table)):
            try:
                verify_function(ex, index)
            except BytecodeVerificationError as err:
                text = disassemble_function(ex, index, getattr(err, "pc", None))
                raise BytecodeVerificationError(f"{err}\n{text}") from None
        return ex
