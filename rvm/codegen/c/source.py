"""C source emission for lowered PrimFuncs, driven by op -> C tables.

One translation unit holds every kernel of a build; each PrimFunc becomes the
exported packed-ABI function ``rvm_kernel_<name>`` (see prologue.py for its
argument checks). Loops keep their order; ``parallel`` loops become OpenMP
worksharing loops, ``vectorized`` loops and local-accumulator reductions
carry ``#pragma omp simd`` (with a reduction clause), outer loops poll the
VM's limits (see polls.py), parameters are
``restrict`` when the function has ``tir.noalias``, and single-element local
buffers become scalars the compiler keeps in registers.

>>> # render_c_source([("add", lowered_add)], use_openmp=False) -> "... rvm_kernel_add(...) ..."
"""
from rvm.codegen.c.expr import CExprPrinter, CodegenError
from rvm.codegen.c.narrow import cast, is_narrow
from rvm.codegen.c.index_check import IndexCheckMixin
from rvm.codegen.c.memory import STACK_TOTAL_BYTES, MemoryMixin
from rvm.codegen.c.packed import PackedCallMixin
from rvm.codegen.c import polls as POLLS
from rvm.codegen.c.polls import (
    NUM_CORES_ATTR, STRIP, PollMixin, contains_loop, covers_body, is_small_tile, needs_strips,
    strip_body,
)
from rvm.codegen.c.preamble import render_preamble
from rvm.codegen.c.prologue import c_string, render_prologue
from rvm.codegen.c.kernel_signature import KernelSignature
from rvm.runtime.kernel_library import kernel_symbol
from rvm.runtime.threads import MAX_THREADS
from rvm.tir import expr as E
from rvm.tir.stmt import ForKind

STACK_LIMIT_BYTES = 32 * 1024
# Loop annotation set by rvm.tir.transform.LocalizeReduction: (operator, accumulator data var).
SIMD_REDUCTION = "rvm.simd_reduction"


class CEmitter(MemoryMixin, IndexCheckMixin, PackedCallMixin, PollMixin, CExprPrinter):
    """Renders one lowered PrimFunc as a packed C function.

    A parallel loop runs on at most the function's ``NUM_CORES_ATTR`` threads (set
    from the target's -num-cores at build). ``helpers`` (shared by the translation
    unit) collects the typed min/max
    helpers and the packed-function handle caches the kernel needs. Buffer
    accesses are proven in bounds or guarded (see memory.py); ``safe`` also
    refuses calls other than intrinsics and registered packed functions.
    """

    def __init__(self, name, func, helpers, safe=False):
        CExprPrinter.__init__(self, name, helpers)
        self.init_memory(safe)
        self.init_index_checks()
        self.init_polls()
        self.func = func
        self.noalias = bool(func.get_attr("tir.noalias", False))
        self.heap = []
        self.in_parallel = 0
        self.max_threads = _max_threads(name, func)
        self.lines = []
        self.indent = 1

    # ---- statements
    def emit(self, line):
        """Appends a line of C at the current indentation."""
        self.lines.append("  " * self.indent + line)

    def fail(self):
        """The statement returning an error, freeing live heap buffers first."""
        frees = "".join(f"RVMBackendFreeWorkspace(rvm_ctx, {name}); "
                        for name in reversed(self.heap))
        return f"{{ {frees}return -1; }}"

    def stmt(self, s):
        """Emits statement ``s``."""
        method = getattr(self, f"_stmt_{type(s).__name__}", None)
        if method is None:
            raise CodegenError(f"kernel '{self.name}': the C backend cannot render statement "
                               f"{type(s).__name__}; lower blocks first")
        method(s)

    def _stmt_SeqStmt(self, s):
        for item in s.seq:
            self.stmt(item)

    def _stmt_BufferStore(self, s):
        data = self.var_name(s.buffer.data)
        value = self.expr(s.value)
        if id(s.buffer.data) in self.scalars:
            if is_narrow(s.buffer.dtype):  # a register of the computation type: round it
                value = cast(s.buffer.dtype, s.buffer.dtype, value)
            self.emit(f"{data} = {value};")
        else:
            self.render_store(s.buffer, s.indices[0], value)

    def _stmt_LetStmt(self, s):
        ctype = self.ctype(s.var.dtype)
        value = self.expr(s.value)
        self.emit(f"const {ctype} {self.define(s.var)} = {value};")
        self.prover.push_let(s.var, s.value)
        self.stmt(s.body)
        self.prover.pop()

    def _stmt_IfThenElse(self, s):
        self.emit(f"if ({self.expr(s.condition)}) {{")
        self.prover.push_fact(s.condition, True)
        self._block(s.then_case)
        self.prover.pop()
        if s.else_case is not None:
            self.emit("} else {")
            self.prover.push_fact(s.condition, False)
            self._block(s.else_case)
            self.prover.pop()
        self.emit("}")

    def _stmt_While(self, s):
        self.emit(f"while ({self.expr(s.condition)}) {{")
        self.indent += 1
        self.emit_poll()
        self.indent -= 1
        self._block(s.body)
        self.emit("}")

    def _block(self, body):
        self.indent += 1
        self.stmt(body)
        self.indent -= 1

    def _stmt_AssertStmt(self, s):
        if self.in_parallel or self.in_simd:
            raise CodegenError(f"kernel '{self.name}': an assertion inside a parallel or "
                               "vectorized loop is not supported; expected it in serial code")
        message = s.message.value if isinstance(s.message, E.StringImm) else repr(s.message)
        text = c_string(f"ValueError: {self.name}: {message}")
        self.emit(f"if (!({self.expr(s.condition)})) {{ RVMAPISetLastError({text}); "
                  f"{self.fail()} }}")
        self.prover.push_fact(s.condition, True)
        self.stmt(s.body)
        self.prover.pop()

    def _stmt_DeclBuffer(self, s):
        if id(s.buffer.data) not in self.names:
            raise CodegenError(f"kernel '{self.name}': buffer '{s.buffer.name}' is declared "
                               "over memory that was never allocated")
        self.stmt(s.body)

    def _stmt_Allocate(self, s):
        ctype = self.storage_ctype(s.dtype)
        extent = s.extents[0] if len(s.extents) == 1 else None
        if extent is None:
            raise CodegenError(f"kernel '{self.name}': allocation '{s.buffer_var.name_hint}' "
                               "is not flat; run FlattenBuffer first")
        if not isinstance(s.buffer_var, E.Var) or s.buffer_var.dtype != "handle":
            self.error(f"allocation '{s.buffer_var!r}' must define a handle variable")
        name = self.define(s.buffer_var)
        size = extent.value if isinstance(extent, E.IntImm) else None
        nbytes = None if size is None else size * s.dtype.itemsize
        self.emit("{")
        self.indent += 1
        if size == 1 and s.annotations.get("scope") == "local":
            self.scalars.add(id(s.buffer_var))
            if is_narrow(s.dtype):
                self.narrow_scalars.add(id(s.buffer_var))
            self.declare_allocation(s.buffer_var, [1], "1")
            self.emit(f"{self.ctype(s.dtype)} {name};")  # a register holds a computed value
            self.stmt(s.body)
        elif size is not None and 0 <= nbytes <= STACK_LIMIT_BYTES \
                and self.stack_bytes + nbytes <= STACK_TOTAL_BYTES:
            self.declare_allocation(s.buffer_var, [size], str(size))
            self.emit(f"{ctype} {name}[{max(size, 1)}] __attribute__((aligned(64)));")
            self.stack_bytes += nbytes
            self.stmt(s.body)
            self.stack_bytes -= nbytes
        else:
            qualifier = " restrict" if self.noalias else ""
            c_size = self.heap_allocation(name, ctype, extent, qualifier)
            self.declare_allocation(s.buffer_var, [extent], c_size)
            # Inside a parallel or simd loop the error path may not return (OpenMP forbids
            # leaving the block): the failure sets the flag checked after the loops.
            flagged = self.in_parallel or self.in_simd
            if not flagged:
                self.emit(f"if ({name} == NULL) {{ {self.workspace_error()}; {self.fail()} }}")
            else:
                self.emit(f"if ({name} == NULL) rvm_oob_hit(&rvm_oob, 1); else {{")
            self.heap.append(name)
            self.stmt(s.body)
            self.heap.pop()
            self.emit(f"RVMBackendFreeWorkspace(rvm_ctx, {name});")
            if flagged:
                self.emit("}")
        self.indent -= 1
        self.emit("}")

    def _stmt_For(self, s):
        ctype = self.ctype(s.loop_var.dtype)
        start = self.expr(s.min)
        end = self.expr(s.extent) if _is_zero(s.min) else f"{start} + {self.expr(s.extent)}"
        var = self.define(s.loop_var)
        # A parallel loop inside a simd loop runs serially: OpenMP allows no thread team
        # (and no exit) inside ``#pragma omp simd``.
        parallel = s.kind == ForKind.PARALLEL and not self.in_simd
        region = parallel and not self.in_parallel and POLLS.ENABLED
        covered = self.covered > 0  # an enclosing loop's poll stands for this nest
        outer = contains_loop(s) and not is_small_tile(s) and not covered
        pragma = None if region else self._loop_pragma(s)
        simd = bool(pragma) and pragma.startswith("#pragma omp simd")
        # A nested serial loop over a small poll-free nest (a register tile's reduction):
        # one poll before it, or polls between strips, instead of one per iteration.
        body = strip_body(s) if outer and not parallel and not simd and not self.in_simd \
            and self.loop_depth and POLLS.ENABLED else None
        whole = body is not None and isinstance(s.extent, E.IntImm) \
            and s.extent.value * body <= STRIP
        # An innermost loop, or a simd loop (which cannot poll itself), of unknown or large
        # extent: polls between strips.
        strips = not region and not covered and (simd or not outer) and needs_strips(s) \
            or body is not None and not whole
        if region:  # a parallel region whose threads can stop early (see polls.py)
            start, end = self.open_parallel_region(ctype, start, end, var)
        elif whole:
            self.emit_poll(count=self.expr(s.extent))
        elif strips:
            start, end = self.open_strips(ctype, start, end, var,
                                          STRIP if body is None else max(1, STRIP // body))
        if pragma:
            self.lines.append(pragma)
        if simd:
            self.open_simd_checks(s.loop_var, len(self.lines) - 1)
        self.emit(f"for ({ctype} {var} = {start}; {var} < {end}; ++{var}) {{")
        if (outer or parallel) and not simd and body is None:  # simd allows no exit: no poll
            self.indent += 1
            self.emit_poll(in_region=region)
            self.indent -= 1
        polls_before = self.polls
        # the poll before the loop, between its strips or per iteration stands for the body
        covers = body is not None or (outer or parallel) and not simd and covers_body(s)
        self.in_parallel += parallel
        self.in_simd += simd
        self.loop_depth += 1
        self.covered += covers
        self.prover.push_loop(s.loop_var, s.min, s.extent)
        self._block(s.body)
        self.prover.pop()
        self.covered -= covers
        self.loop_depth -= 1
        self.in_simd -= simd
        self.in_parallel -= parallel
        self.emit("}")
        if simd:
            for line in self.close_simd_checks():
                self.emit(line)
        if region:
            self.close_parallel_region()
        elif strips:
            self.indent -= 1
            self.emit("}")
        left_early = simd and self.polls > polls_before and not (self.in_parallel or self.in_simd)
        if region or left_early:
            self.emit(f"if (RVM_STOPPED()) {self.stopped()}")

    def _loop_pragma(self, s):
        if s.kind == ForKind.PARALLEL:
            nested = self.in_parallel or self.in_simd
            return None if nested else "#pragma omp parallel for schedule(static)"
        reduction = s.annotations.get(SIMD_REDUCTION)
        clause = ""
        if isinstance(reduction, tuple) and len(reduction) == 2 \
                and reduction[0] in ("+", "*", "max", "min") and id(reduction[1]) in self.scalars \
                and id(reduction[1]) not in self.narrow_scalars:
            clause = f" reduction({reduction[0]}:{self.names[id(reduction[1])]})"
        if s.kind == ForKind.VECTORIZED or clause:
            return "#pragma omp simd" + clause
        if s.kind == ForKind.UNROLLED:
            n = s.extent.value if isinstance(s.extent, E.IntImm) else 8
            return f"#pragma GCC unroll {max(1, min(n, 64))}"
        return None

    def _stmt_Evaluate(self, s):
        value = s.value
        if isinstance(value, E.Call) and value.op == "tir.call_packed":
            self._call_packed(value)
        elif isinstance(value, (E.IntImm, E.FloatImm)):
            return
        else:
            self.emit(f"(void){self.expr(value)};")

    def render(self):
        """The C definition of the kernel."""
        sig = KernelSignature(self.name, self.func)
        self.start_proofs(sig)
        prologue = render_prologue(sig, self)
        self.stmt(self.func.body)
        head = (f"RVM_EXPORT int {kernel_symbol(self.name)}(RVMValue* args, int* type_codes, "
                f"int num_args, RVMValue* ret, int* ret_code, void* resource) {{")
        flag_head, flag_tail = self.render_flag_check()
        entry = (prologue + self.size_lines + self.render_requirements() + flag_head
                 + self.context_lines())
        return "\n".join([head] + ["  " + line for line in entry] + self.lines
                         + ["  " + line for line in flag_tail + self.context_exit_lines()]
                         + ["  return 0;", "}"])


def _max_threads(name, func):
    """The thread cap of ``func``'s parallel loops: its NUM_CORES_ATTR (the build target's
    -num-cores), 0 when it has none."""
    value = func.get_attr(NUM_CORES_ATTR, 0)
    if isinstance(value, E.IntImm):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_THREADS:
        raise CodegenError(f"kernel '{name}': attribute '{NUM_CORES_ATTR}' expects an int "
                           f"from 0 to {MAX_THREADS} (threads of its parallel loops), got "
                           f"{value!r}")
    return value


def _is_zero(e):
    return isinstance(e, E.IntImm) and e.value == 0


def render_c_source(named_funcs, use_openmp, safe=False):
    """One C translation unit for ``named_funcs`` ((name, lowered PrimFunc) pairs).

    ``safe`` refuses what untrusted TIR may not use (see rvm.codegen.c.memory)."""
    symbols = {}
    for name, _ in named_funcs:
        other = symbols.setdefault(kernel_symbol(name), name)
        if other != name:
            raise CodegenError(f"kernels '{other}' and '{name}' would both be exported as "
                               f"'{kernel_symbol(name)}'; rename one")
    helpers = {}
    bodies = [CEmitter(name, func, helpers, safe).render() for name, func in named_funcs]
    parts = [render_preamble(use_openmp)]
    parts.extend(helpers.values())
    parts.extend(bodies)
    return "\n".join(parts) + "\n"
