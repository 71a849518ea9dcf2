"""Memory safety of generated C kernels: where buffers live, and guarded accesses.

Every buffer a kernel reads or writes must lie over a tensor parameter or an
allocation of the kernel (never over another pointer); each access is proven
in bounds by ``BoundsProver`` or guarded: the guard skips the access and sets
the kernel's out-of-bounds flag, and the kernel then fails with an
``IndexError`` naming the buffer. Heap allocations go through the runtime's
``RVMBackendAllocWorkspace`` (charged to the running VM's memory_limit) and
check their size and result (inside a parallel loop a failure sets the flag
instead of returning).
Polynomial requirements the proofs relied on are checked on entry.

With ``safe=True`` (TIR from an untrusted file) the emitter also refuses what
could reach code other than the runtime's intrinsics and registered packed
functions: ``call_extern`` and raw handles passed to packed functions.
"""
from rvm.codegen.c import narrow as c_narrow
from rvm.codegen.c.bounds import BoundsProver
from rvm.codegen.c.prologue import c_string
from rvm.tir import expr as E

# Total bytes of stack arrays live at once in one kernel (more goes to the heap).
STACK_TOTAL_BYTES = 256 * 1024
_OOM = 1  # flag code: an allocation inside a parallel loop failed


class _Memory:
    """A parameter tensor or an allocation: ``factors`` of its exact element count (or
    None when not known exactly), and ``c_size``, the C expression of its element count."""

    def __init__(self, name, factors, c_size=None, tensor=None):
        self.name = name
        self.factors = factors
        self.c_size = c_size
        self.tensor = tensor


class MemoryMixin:
    """The parts of CEmitter that know where memory is and guard its accesses."""

    def init_memory(self, safe):
        self.safe = safe
        self.memory = {}
        self.size_lines = []
        self.guard_messages = []
        self.alloc_count = 0
        self.uses_context = False  # rvm_ctx (RVMBackendGetContext) is declared on entry
        self.stack_bytes = 0
        self.prover = None

    def start_proofs(self, sig):
        """Creates the prover for the kernel of signature ``sig``."""
        self.prover = BoundsProver(sig.shape_vars,
                                   [p.var for p in sig.params if p.kind == "scalar"],
                                   [d for p in sig.params for d in p.shape
                                    if not isinstance(d, (E.IntImm, E.Var))])

    def declare_param_memory(self, param, tensor):
        """Registers the tensor of parameter ``param`` (C DLTensor ``tensor``)."""
        # The prologue checked every dimension equal to its declared expression.
        self.memory[id(param.buffer.data)] = _Memory(
            param.name, [d.value if isinstance(d, E.IntImm) else d for d in param.shape],
            tensor=tensor)

    def _memory_of(self, buffer):
        mem = self.memory.get(id(buffer.data))
        if mem is None:
            self.error(f"buffer '{buffer.name}' lies over '{buffer.data.name_hint}', which is "
                       "neither a tensor parameter nor an allocation of the kernel")
        return mem

    def _c_size(self, mem):
        if mem.c_size is None:
            mem.c_size = f"rvm_size_{len(self.size_lines)}"
            self.size_lines.append(f"const int64_t {mem.c_size} = rvm_numel({mem.tensor});")
        return mem.c_size

    def _guard(self, buffer, index):
        """None when ``buffer[index]`` is proven in bounds, else (C size, flag code)."""
        mem = self._memory_of(buffer)
        if mem.factors is not None and self.prover.proves(index, mem.factors):
            return None
        self.guard_messages.append(f"IndexError: {self.name}: an index of buffer "
                                   f"'{buffer.name}' is out of bounds")
        return self._c_size(mem), _OOM + len(self.guard_messages)

    def render_load(self, buffer, index):
        """The C expression reading ``buffer[index]`` (guarded unless proven)."""
        data = self.var_name(buffer.data)
        guard = self._guard(buffer, index)
        narrow = c_narrow.is_narrow(buffer.dtype)
        if guard is None:
            idx = self.proven_index(index)
            return c_narrow.load(buffer.dtype, f"{data}[{idx}]") if narrow else f"{data}[{idx}]"
        size, code = guard
        element = c_narrow.load(buffer.dtype, f"{data}[rvm_i]") if narrow else f"{data}[rvm_i]"
        return (f"({{ int rvm_ixov = 0; const int64_t rvm_i = {self.checked_index(index)}; "
                f"(!rvm_ixov && rvm_i >= 0 && rvm_i < {size}) "
                f"? {element} : (rvm_oob_hit(&rvm_oob, {code}), 0); }})")

    def render_store(self, buffer, index, value):
        """Emits ``buffer[index] = value`` (guarded unless proven)."""
        data = self.var_name(buffer.data)
        guard = self._guard(buffer, index)
        if c_narrow.is_narrow(buffer.dtype):
            value = c_narrow.store(buffer.dtype, value)
        if guard is None:
            self.emit(f"{data}[{self.proven_index(index)}] = {value};")
            return
        size, code = guard
        self.emit(f"{{ int rvm_ixov = 0; const int64_t rvm_i = {self.checked_index(index)}; "
                  f"if (!rvm_ixov && rvm_i >= 0 && rvm_i < {size}) "
                  f"{data}[rvm_i] = {value}; else rvm_oob_hit(&rvm_oob, {code}); }}")

    def add_flag_message(self, message):
        """The flag code of a new failure ``message`` (reported after the loops)."""
        self.guard_messages.append(message)
        return _OOM + len(self.guard_messages)

    def declare_allocation(self, var, factors, c_size):
        """Registers an allocation of ``var`` (its element count: ``factors``, C ``c_size``)."""
        self.memory[id(var)] = _Memory(var.name_hint, factors, c_size)

    def heap_allocation(self, name, ctype, extent, qualifier):
        """Emits the checked workspace allocation of ``extent`` elements (a size out of range
        is refused as -1 bytes); returns the C size name."""
        size = f"rvm_n_{self.alloc_count}"
        self.alloc_count += 1
        self.uses_context = True
        self.emit(f"const int64_t {size} = (int64_t)({self.expr(extent)});")
        self.emit(f"{ctype}*{qualifier} {name} = ({ctype}*)RVMBackendAllocWorkspace(rvm_ctx, "
                  f"({size} >= 0 && {size} < (int64_t)(PTRDIFF_MAX / sizeof({ctype}))) ? "
                  f"{size} * (int64_t)sizeof({ctype}) : -1);")
        return size

    def workspace_error(self):
        """The C expression setting the error of a failed workspace allocation (-1)."""
        return f"RVMBackendWorkspaceError(rvm_ctx, {c_string(self.name)})"

    def render_requirements(self):
        """Lines checking, on entry, the polynomial ranges the bounds proofs relied on."""
        lines = []
        message = c_string(f"ValueError: {self.name}: the argument sizes overflow the "
                           "kernel's index arithmetic")
        for poly, lo, hi in self.prover.requirements.values():
            terms = []
            # By C names, not by the atoms' ids: the same TIR renders the same text.
            for names, coeff in sorted((sorted(self.names[k] for k in mono), coeff)
                                       for mono, coeff in poly.items()):
                term = f"INT64_C({int(coeff)})"
                for name in names:
                    term = f"rvm_cmul({term}, (int64_t){name}, &rvm_ov)"
                terms.append(term)
            value = terms[0]
            for term in terms[1:]:
                value = f"rvm_cadd({value}, {term}, &rvm_ov)"
            checks = ["rvm_ov"]
            if lo > -(1 << 63):
                checks.append(f"rvm_v < INT64_C({lo})")
            if hi < (1 << 63) - 1:
                checks.append(f"rvm_v > INT64_C({hi})")
            # RVM_UNLIKELY: left unmarked, gcc's guess that each check may fail lowers the
            # estimated count of the loops after them; with enough checks it compiles those
            # loops as cold, without unrolling a register tile (its accumulators then live in
            # memory, 2.5x slower on a matmul of n * L rows)
            lines.append(f"{{ int rvm_ov = 0; const int64_t rvm_v = {value}; "
                         f"if (RVM_UNLIKELY({' || '.join(checks)})) {{ "
                         f"RVMAPISetLastError({message}); "
                         "return -1; } }")
        return lines

    def render_flag_check(self):
        """Lines failing the kernel when a guard or a parallel allocation set the flag."""
        if not self.guard_messages and not self.alloc_count:
            return [], []
        messages = [f"MemoryError: {self.name}: out of memory"] + self.guard_messages
        table = ", ".join(c_string(m) for m in messages)
        head = ["int rvm_oob = 0;"]
        tail = [f"if (RVM_UNLIKELY(rvm_oob != 0)) {{",
                f"  if (rvm_oob == {_OOM}) return {self.workspace_error()};"
                if self.alloc_count else None,
                f"  static const char* const rvm_messages[] = {{{table}}};"]
        if self.index_codes:  # the failing index and its bounds (see index_check.py)
            head.append("int64_t rvm_bad[3] = {0, 0, 0};")
            tail += ["  " + line for line in self.render_index_failures()]
        tail += ["  RVMAPISetLastError(rvm_messages[rvm_oob - 1]);",
                 "  return -1;",
                 "}"]
        return head, [line for line in tail if line is not None]
