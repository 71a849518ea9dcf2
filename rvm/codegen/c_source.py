"""C source emission for lowered PrimFuncs, driven by op -> C tables.

One translation unit holds every kernel of a build; each PrimFunc becomes the
exported packed-ABI function ``rvm_kernel_<name>`` (see c_prologue for its
argument checks). Loops keep their order; ``parallel`` loops become OpenMP
worksharing loops, ``vectorized`` loops and local-accumulator reductions
carry ``#pragma omp simd`` (with a reduction clause), parameters are
``restrict`` when the function has ``tir.noalias``, and single-element local
buffers become scalars the compiler keeps in registers.

>>> # render_c_source([("add", lowered_add)], use_openmp=False) -> "... rvm_kernel_add(...) ..."
"""
import math

from rvm.codegen.c_memory import STACK_TOTAL_BYTES, MemoryMixin
from rvm.codegen.c_packed import PackedCallMixin
from rvm.codegen.c_preamble import render_preamble
from rvm.codegen.c_prologue import c_string, render_prologue
from rvm.codegen.kernel_signature import KernelSignature
from rvm.runtime.kernel_library import kernel_symbol
from rvm.support.errors import RVMError
from rvm.tir import expr as E
from rvm.tir.stmt import ForKind

C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "handle": "void*",
}
BINARY = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.EQ: "==", E.NE: "!=", E.LT: "<",
          E.LE: "<=", E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||"}
# Intrinsic -> (float32 function, float64 function).
MATH = {
    "tir.exp": ("expf", "exp"), "tir.exp2": ("exp2f", "exp2"), "tir.log": ("logf", "log"),
    "tir.log2": ("log2f", "log2"), "tir.log10": ("log10f", "log10"),
    "tir.log1p": ("log1pf", "log1p"), "tir.sqrt": ("sqrtf", "sqrt"),
    "tir.tanh": ("tanhf", "tanh"), "tir.erf": ("erff", "erf"), "tir.sin": ("sinf", "sin"),
    "tir.cos": ("cosf", "cos"), "tir.tan": ("tanf", "tan"), "tir.asin": ("asinf", "asin"),
    "tir.acos": ("acosf", "acos"), "tir.atan": ("atanf", "atan"), "tir.sinh": ("sinhf", "sinh"),
    "tir.cosh": ("coshf", "cosh"), "tir.asinh": ("asinhf", "asinh"),
    "tir.acosh": ("acoshf", "acosh"), "tir.atanh": ("atanhf", "atanh"), "tir.fabs": ("fabsf", "fabs"), "tir.floor": ("floorf", "floor"),
    "tir.ceil": ("ceilf", "ceil"), "tir.round": ("nearbyintf", "nearbyint"),
    "tir.trunc": ("truncf", "trunc"), "tir.pow": ("powf", "pow"), "tir.fmod": ("fmodf", "fmod"),
}
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false args type_codes num_args ret ret_code "
    "resource kernel main NULL asm constructor destructor init_array fini_array".split())
# Names the generated code or the C library uses, never given to kernel variables.
RESERVED = C_KEYWORDS | frozenset(
    [fn for pair in MATH.values() for fn in pair] + list(C_TYPES.values())
    + "malloc free isnan isinf isfinite snprintf strcmp size_t INFINITY NAN INT64_C UINT64_C INT64_MIN "
      "INT32_MIN".split())
STACK_LIMIT_BYTES = 32 * 1024
# Loop annotation set by rvm.transform.tir.LocalizeReduction: (operator, accumulator data var).
SIMD_REDUCTION = "rvm.simd_reduction"


class CodegenError(RVMError, ValueError):
    """A lowered PrimFunc uses something the C backend cannot express."""


class CEmitter(MemoryMixin, PackedCallMixin):
    """Renders one lowered PrimFunc as a packed C function.

    ``helpers`` (shared by the translation unit) collects the typed min/max
    helpers and the packed-function handle caches the kernel needs. Buffer
    accesses are proven in bounds or guarded (see c_memory); ``safe`` also
    refuses calls other than intrinsics and registered packed functions.
    """

    def __init__(self, name, func, helpers, safe=False):
        self.init_memory(safe)
        self.name = name
        self.func = func
        self.helpers = helpers
        self.noalias = bool(func.get_attr("tir.noalias", False))
        self.names = {}
        self.used = set()
        self.scalars = set()
        self.heap = []
        self.in_parallel = 0
        self.lines = []
        self.indent = 1

    def error(self, message):
        """Raises CodegenError for this kernel."""
        raise CodegenError(f"kernel '{self.name}': {message}")

    # ---- names and types
    def fresh(self, hint):
        """A new C identifier based on ``hint``."""
        base = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_"
                       for c in str(hint)) or "v"
        if base[0].isdigit() or base in RESERVED or base.startswith(("rvm_", "RVM", "kRVM", "DL")):
            base = "v_" + base
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def define(self, var, hint=None):
        """Names the variable ``var`` (a new C identifier)."""
        name = self.fresh(hint or var.name_hint)
        self.names[id(var)] = name
        return name

    def ctype(self, dtype):
        """The C type of a scalar dtype (CodegenError for vectors and unsupported types)."""
        if dtype.lanes != 1 or str(dtype) not in C_TYPES:
            raise CodegenError(f"kernel '{self.name}': dtype {dtype} is not supported by the C "
                               f"backend; expected one of {', '.join(C_TYPES)}")
        return C_TYPES[str(dtype)]

    # ---- expressions
    def expr(self, e):
        """The C text of expression ``e``, fully parenthesized."""
        method = getattr(self, f"_expr_{type(e).__name__}", None)
        if method is None:
            if type(e) in BINARY:
                return f"({self.expr(e.a)} {BINARY[type(e)]} {self.expr(e.b)})"
            raise CodegenError(f"kernel '{self.name}': the C backend cannot render "
                               f"{type(e).__name__} {e!r}")
        return method(e)

    def _expr_Var(self, e):
        name = self.names.get(id(e))
        if name is None:
            raise CodegenError(f"kernel '{self.name}': variable '{e.name_hint}' is used but "
                               "never defined")
        return name

    _expr_SizeVar = _expr_Var

    def _expr_IntImm(self, e):
        v, dtype = e.value, e.dtype
        if dtype.is_bool:
            return "1" if v else "0"
        if dtype.bits == 64:
            if v == -(1 << 63):
                return "INT64_MIN"
            return f"INT64_C({v})" if dtype.is_int else f"UINT64_C({v})"
        if dtype == "int32" and v == -(1 << 31):
            return "INT32_MIN"
        if dtype in ("int32",):
            return str(v) if v >= 0 else f"({v})"
        return f"(({self.ctype(dtype)}){v})"

    def _expr_FloatImm(self, e):
        v = e.value
        suffix = "f" if e.dtype == "float32" else ""
        if math.isnan(v):
            return "NAN" if suffix else "((double)NAN)"
        if math.isinf(v):
            text = "INFINITY" if suffix else "((double)INFINITY)"
            return text if v > 0 else f"(-{text})"
        text = repr(float(v))
        return f"({text}{suffix})" if v < 0 else f"{text}{suffix}"

    def _expr_StringImm(self, e):
        return c_string(e.value)

    def _expr_Cast(self, e):
        inner = self.expr(e.value)
        if e.dtype.is_bool:
            return f"({inner} != 0)"
        return f"(({self.ctype(e.dtype)}){inner})"

    def _expr_Div(self, e):
        return self._int_division(e, "/", "rvm_div")

    def _expr_Mod(self, e):
        if e.dtype.is_float:
            return f"{MATH['tir.fmod'][e.dtype.bits == 64]}({self.expr(e.a)}, {self.expr(e.b)})"
        return self._int_division(e, "%", "rvm_mod")

    def _int_division(self, e, c_op, helper):
        """``a op b``; a divisor that may be 0 or -1 goes through a helper that cannot trap."""
        a, b = self.expr(e.a), self.expr(e.b)
        if e.dtype.is_float and c_op == "/":
            return f"({a} / {b})"
        if isinstance(e.b, E.IntImm) and e.b.value not in (0, -1):
            return f"({a} {c_op} {b})"
        if e.dtype.is_uint:
            helper = helper.replace("rvm_", "rvm_u")
        return f"(({self.ctype(e.dtype)}){helper}({a}, {b}))"

    def _floor_op(self, e, helper):
        if e.dtype.is_float:
            raise CodegenError(f"kernel '{self.name}': float {type(e).__name__} must be lowered "
                               "by LowerIntrin first")
        return f"(({self.ctype(e.dtype)}){helper}({self.expr(e.a)}, {self.expr(e.b)}))"

    def _expr_FloorDiv(self, e):
        return self._floor_op(e, "rvm_floordiv")

    def _expr_FloorMod(self, e):
        return self._floor_op(e, "rvm_floormod")

    def _minmax(self, e, kind):
        ctype = self.ctype(e.dtype)
        helper = f"rvm_{kind}_{ctype.replace('_t', '')}"
        cmp = "<" if kind == "min" else ">"
        self.helpers.setdefault(
            helper, f"static inline {ctype} {helper}({ctype} a, {ctype} b) "
                    f"{{ return a {cmp} b ? a : b; }}")
        return f"{helper}({self.expr(e.a)}, {self.expr(e.b)})"

    def _expr_Min(self, e):
        return self._minmax(e, "min")

    def _expr_Max(self, e):
        return self._minmax(e, "max")

    def _expr_Not(self, e):
        return f"(!{self.expr(e.a)})"

    def _expr_Select(self, e):
        return self._branches(e.condition, e.true_value, e.false_value)

    def _expr_Let(self, e):
        ctype = self.ctype(e.var.dtype)
        value = self.expr(e.value)
        name = self.define(e.var)
        self.prover.push_let(e.var, e.value)
        body = self.expr(e.body)
        self.prover.pop()
        return f"({{ const {ctype} {name} = {value}; {body}; }})"

    def _expr_BufferLoad(self, e):
        data = self._expr_Var(e.buffer.data)
        if id(e.buffer.data) in self.scalars:
            return data
        return self.render_load(e.buffer, e.indices[0])

    def _branches(self, cond, a, b):
        """``cond ? a : b`` with the condition known inside each branch."""
        c = self.expr(cond)
        self.prover.push_fact(cond, True)
        then = self.expr(a)
        self.prover.pop()
        self.prover.push_fact(cond, False)
        other = self.expr(b)
        self.prover.pop()
        return f"({c} ? {then} : {other})"

    def _expr_Call(self, e):
        op, args = e.op, e.args
        if op == "tir.if_then_else":
            return self._branches(args[0], args[1], args[2])
        if op in MATH:
            if not e.dtype.is_float or e.dtype.bits not in (32, 64):
                raise CodegenError(f"kernel '{self.name}': {op} needs float32/float64, "
                                   f"got {e.dtype}")
            fn = MATH[op][e.dtype.bits == 64]
            return f"{fn}({', '.join(self.expr(a) for a in args)})"
        if op in ("tir.isnan", "tir.isinf", "tir.isfinite"):
            return f"{op[4:]}({self.expr(args[0])})"
        if op == "tir.call_extern":
            if self.safe:
                self.error(f"call_extern of {args[0]!r} is refused: kernels loaded from a file "
                           "may call only intrinsics and registered packed functions")
            return f"{args[0].value}({', '.join(self.expr(a) for a in args[1:])})"
        if op == "tir.call_packed":
            raise CodegenError(f"kernel '{self.name}': call_packed is supported as a statement "
                               "(T.evaluate(T.call_packed(...))), not inside an expression")
        raise CodegenError(f"kernel '{self.name}': no C rendering for intrinsic '{op}'")

    # ---- statements
    def emit(self, line):
        """Appends a line of C at the current indentation."""
        self.lines.append("  " * self.indent + line)

    def fail(self):
        """The statement returning an error, freeing live heap buffers first."""
        frees = "".join(f"free({name}); " for name in reversed(self.heap))
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
        data = self._expr_Var(s.buffer.data)
        value = self.expr(s.value)
        if id(s.buffer.data) in self.scalars:
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
        self._block(s.body)
        self.emit("}")

    def _block(self, body):
        self.indent += 1
        self.stmt(body)
        self.indent -= 1

    def _stmt_AssertStmt(self, s):
        if self.in_parallel:
            raise CodegenError(f"kernel '{self.name}': an assertion inside a parallel loop is "
                               "not supported; expected it in serial code")
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
        ctype = self.ctype(s.dtype)
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
            self.declare_allocation(s.buffer_var, [1], "1")
            self.emit(f"{ctype} {name};")
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
            if not self.in_parallel:
                self.emit(f"if ({name} == NULL) {{ RVMAPISetLastError("
                          f"{c_string('MemoryError: ' + self.name + ': out of memory')}); "
                          f"{self.fail()} }}")
            else:
                self.emit(f"if ({name} == NULL) rvm_oob_hit(&rvm_oob, 1); else {{")
            self.heap.append(name)
            self.stmt(s.body)
            self.heap.pop()
            self.emit(f"free({name});")
            if self.in_parallel:
                self.emit("}")
        self.indent -= 1
        self.emit("}")

    def _stmt_For(self, s):
        ctype = self.ctype(s.loop_var.dtype)
        start = self.expr(s.min)
        end = self.expr(s.extent) if _is_zero(s.min) else f"{start} + {self.expr(s.extent)}"
        var = self.define(s.loop_var)
        pragma = self._loop_pragma(s)
        if pragma:
            self.lines.append(pragma)
        self.emit(f"for ({ctype} {var} = {start}; {var} < {end}; ++{var}) {{")
        parallel = s.kind == ForKind.PARALLEL
        self.in_parallel += parallel
        self.prover.push_loop(s.loop_var, s.min, s.extent)
        self._block(s.body)
        self.prover.pop()
        self.in_parallel -= parallel
        self.emit("}")

    def _loop_pragma(self, s):
        if s.kind == ForKind.PARALLEL:
            return "#pragma omp parallel for schedule(static)" if not self.in_parallel else None
        reduction = s.annotations.get(SIMD_REDUCTION)
        clause = ""
        if isinstance(reduction, tuple) and len(reduction) == 2 \
                and reduction[0] in ("+", "*", "max", "min") and id(reduction[1]) in self.scalars:
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
        entry = prologue + self.size_lines + self.render_requirements() + flag_head
        return "\n".join([head] + ["  " + line for line in entry] + self.lines
                         + ["  " + line for line in flag_tail] + ["  return 0;", "}"])


def _is_zero(e):
    return isinstance(e, E.IntImm) and e.value == 0


def render_c_source(named_funcs, use_openmp, safe=False):
    """One C translation unit for ``named_funcs`` ((name, lowered PrimFunc) pairs).

    ``safe`` refuses what untrusted TIR may not use (see rvm.codegen.c_memory)."""
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
