"""The C dialect of the TIR expression printer, and the C names and types of a kernel.

Expressions print fully parenthesized: ``((i * 4) + j)``. Integer division
whose divisor may be 0 or -1 goes through helpers that cannot trap, min/max
through typed inline helpers collected in ``helpers`` (shared by the
translation unit), and math intrinsics map to libm by width.

The index of a guarded access prints through ``checked_index``: its sums,
products, casts and the operands of floor division and min/max are computed
in int64 with ``__builtin_*_overflow`` and checked against the range of each
step's dtype (the ranges the bounds prover uses), so an index whose
arithmetic overflows sets ``rvm_ixov`` and fails its guard instead of
wrapping into the buffer.
"""
import math

from rvm.codegen.c import narrow as c_narrow
from rvm.codegen.c.bound_poly import common_range
from rvm.codegen.c.prologue import c_string
from rvm.support.errors import RVMError
from rvm.tir import expr as E
from rvm.tir.expr_printer import ExprPrinter
from rvm.tir.op import CHECK_INDEX

C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "handle": "void*",
}
BINARY = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.EQ: "==", E.NE: "!=", E.LT: "<",
          E.LE: "<=", E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||"}
# Intrinsic -> (float32 function, float64 function); rvm_expf is the preamble's EXP_HELPER.
MATH = {
    "tir.exp": ("rvm_expf", "exp"), "tir.exp2": ("exp2f", "exp2"), "tir.log": ("logf", "log"),
    "tir.log2": ("log2f", "log2"), "tir.log10": ("log10f", "log10"),
    "tir.log1p": ("log1pf", "log1p"), "tir.sqrt": ("sqrtf", "sqrt"),
    "tir.tanh": ("tanhf", "tanh"), "tir.erf": ("erff", "erf"), "tir.sin": ("sinf", "sin"),
    "tir.cos": ("cosf", "cos"), "tir.tan": ("tanf", "tan"), "tir.asin": ("asinf", "asin"),
    "tir.acos": ("acosf", "acos"), "tir.atan": ("atanf", "atan"), "tir.sinh": ("sinhf", "sinh"),
    "tir.cosh": ("coshf", "cosh"), "tir.asinh": ("asinhf", "asinh"),
    "tir.acosh": ("acoshf", "acosh"), "tir.atanh": ("atanhf", "atanh"),
    "tir.fabs": ("fabsf", "fabs"), "tir.floor": ("floorf", "floor"),
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
    + "expf malloc free isnan isinf isfinite snprintf strcmp size_t INFINITY NAN INT64_C UINT64_C "
      "INT64_MIN INT32_MIN".split())
# The C operators: node type -> (symbol, precedence); C text is fully parenthesized.
C_INFIX = {E.Add: ("+", 0), E.Sub: ("-", 0), E.Mul: ("*", 0), E.EQ: ("==", 0),
           E.NE: ("!=", 0), E.LT: ("<", 0), E.LE: ("<=", 0), E.GT: (">", 0), E.GE: (">=", 0),
           E.And: ("&&", 0), E.Or: ("||", 0)}


# Checked int64 steps for guarded indices: the result, with *ov set when the exact value
# leaves [lo, hi] (or int64).
_CHECKED = {
    E.Add: ("rvm_ck_add", "__builtin_add_overflow(a, b, &r)"),
    E.Sub: ("rvm_ck_sub", "__builtin_sub_overflow(a, b, &r)"),
    E.Mul: ("rvm_ck_mul", "__builtin_mul_overflow(a, b, &r)"),
}
_FIT = ("static inline int64_t rvm_ck_fit(int64_t v, int64_t lo, int64_t hi, int* ov) "
        "{ if (v < lo || v > hi) *ov = 1; return v; }")
_FROM_U64 = ("static inline int64_t rvm_ck_u64(uint64_t v, int* ov) "
             "{ if (v > (uint64_t)INT64_MAX) { *ov = 1; return -1; } return (int64_t)v; }")
# Floor division of checked operands: INT64_MIN // -1 is the one quotient out of range.
_FLOOR = "static inline int64_t rvm_ck_{0}(int64_t a, int64_t b, int* ov) " \
         "{{ if (a == INT64_MIN && b == -1) *ov = 1; return rvm_{0}(a, b); }}"


def _int64_literal(v):
    return "INT64_MIN" if v == -(1 << 63) else f"INT64_C({v})"


class CodegenError(RVMError, ValueError):
    """A lowered PrimFunc uses something the C backend cannot express."""


class _NoFacts:
    """What a printer without bounds proofs assumes from branches and lets: nothing."""

    def push_fact(self, cond, value):
        pass

    def push_let(self, var, value):
        pass

    def pop(self):
        pass


class CExprPrinter(ExprPrinter):
    """Prints the expressions of kernel ``name`` as C; ``names`` maps id(var) to C names."""

    infix = C_INFIX
    calls = {}
    # Script-only forms: in C they fall through to ``unknown``.
    print_bool = print_int = print_float = print_str = print_Buffer = None
    print_Ramp = print_Broadcast = print_Reduce = None

    def __init__(self, name, helpers):
        self.name = name
        self.helpers = helpers
        self.names = {}
        self.used = set()
        self.scalars = set()
        self.narrow_scalars = set()  # the registers of narrow types (rounded when stored)
        self.prover = _NoFacts()
        self.safe = False

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
        """The C type values of scalar dtype ``dtype`` compute in (float for the narrow
        floats; CodegenError for vectors and unsupported types)."""
        if c_narrow.is_narrow(dtype):
            return c_narrow.compute_ctype(dtype)
        if dtype.lanes != 1 or str(dtype) not in C_TYPES:
            raise CodegenError(f"kernel '{self.name}': dtype {dtype} is not supported by the C "
                               f"backend; expected one of {', '.join(C_TYPES)} or a narrow "
                               "type (float16, bfloat16, float8, float4, int4, uint4, int2, "
                               "uint2)")
        return C_TYPES[str(dtype)]

    def storage_ctype(self, dtype):
        """The C type elements of ``dtype`` are stored in."""
        return c_narrow.storage_ctype(dtype) if c_narrow.is_narrow(dtype) else self.ctype(dtype)

    # ---- expressions
    def expr(self, e):
        """The C text of expression ``e``, fully parenthesized."""
        return self.text(e)[0]

    def unknown(self, e):
        raise CodegenError(f"kernel '{self.name}': the C backend cannot render "
                           f"{type(e).__name__} {e!r}")

    def print_infix(self, e, symbol, prec):
        return f"({self.expr(e.a)} {symbol} {self.expr(e.b)})"

    def print_Var(self, e):
        return self.var_name(e)

    def var_name(self, var):
        """The C name of a defined variable (CodegenError for an undefined one)."""
        name = self.names.get(id(var))
        if name is None:
            raise CodegenError(f"kernel '{self.name}': variable '{var.name_hint}' is used but "
                               "never defined")
        return name

    def print_IntImm(self, e):
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

    def print_FloatImm(self, e):
        v = e.value
        if e.dtype.is_narrow_float:
            v = c_narrow.round_constant(e.dtype, v)
        suffix = "f" if e.dtype == "float32" or e.dtype.is_narrow_float else ""
        if math.isnan(v):
            return "NAN" if suffix else "((double)NAN)"
        if math.isinf(v):
            text = "INFINITY" if suffix else "((double)INFINITY)"
            return text if v > 0 else f"(-{text})"
        text = repr(float(v))
        return f"({text}{suffix})" if v < 0 else f"{text}{suffix}"

    def print_StringImm(self, e):
        return c_string(e.value)

    def print_Cast(self, e):
        inner = self.expr(e.value)
        if e.dtype.is_bool:
            return f"({inner} != 0)"
        if c_narrow.is_narrow(e.dtype) and e.dtype != e.value.dtype:
            return c_narrow.cast(e.dtype, e.value.dtype, inner)
        return f"(({self.ctype(e.dtype)}){inner})"

    def print_Div(self, e):
        return self._int_division(e, "/", "rvm_div")

    def print_Mod(self, e):
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

    def print_FloorDiv(self, e):
        return self._floor_op(e, "rvm_floordiv")

    def print_FloorMod(self, e):
        return self._floor_op(e, "rvm_floormod")

    def _minmax(self, e, kind, a=None, b=None):
        ctype = self.ctype(e.dtype)
        helper = f"rvm_{kind}_{ctype.replace('_t', '')}"
        cmp = "<" if kind == "min" else ">"
        self.helpers.setdefault(
            helper, f"static inline {ctype} {helper}({ctype} a, {ctype} b) "
                    f"{{ return a {cmp} b ? a : b; }}")
        a = self.expr(e.a) if a is None else a
        b = self.expr(e.b) if b is None else b
        return f"{helper}({a}, {b})"

    def print_Min(self, e):
        return self._minmax(e, "min")

    def print_Max(self, e):
        return self._minmax(e, "max")

    def print_Not(self, e):
        return f"(!{self.expr(e.a)})"

    def print_Select(self, e):
        return self._branches(e.condition, e.true_value, e.false_value)

    def print_Let(self, e):
        ctype = self.ctype(e.var.dtype)
        value = self.expr(e.value)
        name = self.define(e.var)
        self.prover.push_let(e.var, e.value)
        body = self.expr(e.body)
        self.prover.pop()
        return f"({{ const {ctype} {name} = {value}; {body}; }})"

    def proven_index(self, e):
        """The C text of an index the bounds prover proved, with its sums and products in
        int64: the proof says no step leaves its dtype's range, so the value is the same,
        and the compiler sees addresses affine in the loop variables (int32 arithmetic,
        which wraps under -fwrapv, would keep it from vectorizing)."""
        if not e.dtype.is_int or e.dtype.bits >= 64 or type(e) not in _CHECKED:
            return self.expr(e)
        return self._wide(e)

    def _wide(self, e):
        if type(e) in _CHECKED:
            return f"({self._wide(e.a)} {BINARY[type(e)]} {self._wide(e.b)})"
        if isinstance(e, E.IntImm):
            return f"INT64_C({e.value})"
        return f"((int64_t){self.expr(e)})"

    def checked_index(self, e, flag="rvm_ixov"):
        """The C text of integer expression ``e`` as an int64 computed without overflow: a
        step whose exact value leaves its dtype's range sets int ``flag`` (declared by the
        caller); parts other than arithmetic, casts, floor division and min/max print as
        usual."""
        if not (e.dtype.is_int or e.dtype.is_uint) or e.dtype.lanes != 1:
            return f"((int64_t){self.expr(e)})"
        lo, hi = common_range(e)
        hi = min(hi, (1 << 63) - 1)
        if type(e) in _CHECKED:
            helper, builtin = _CHECKED[type(e)]
            self.helpers.setdefault(
                helper, f"static inline int64_t {helper}(int64_t a, int64_t b, int64_t lo, "
                        f"int64_t hi, int* ov) {{ int64_t r; if ({builtin} || r < lo || r > hi) "
                        "*ov = 1; return r; }")
            lo, hi = common_range(e, e.a, e.b)
            return (f"{helper}({self.checked_index(e.a, flag)}, {self.checked_index(e.b, flag)}, "
                    f"{_int64_literal(lo)}, {_int64_literal(min(hi, (1 << 63) - 1))}, &{flag})")
        if isinstance(e, E.Cast) and (e.value.dtype.is_int or e.value.dtype.is_uint):
            self.helpers.setdefault("rvm_ck_fit", _FIT)
            return (f"rvm_ck_fit({self.checked_index(e.value, flag)}, {_int64_literal(lo)}, "
                    f"{_int64_literal(hi)}, &{flag})")
        if isinstance(e, (E.FloorDiv, E.FloorMod, E.Min, E.Max)):
            self.helpers.setdefault("rvm_ck_fit", _FIT)
            lo, hi = common_range(e, e.a, e.b)
            a, b = (f"rvm_ck_fit({self.checked_index(x, flag)}, {_int64_literal(lo)}, "
                    f"{_int64_literal(min(hi, (1 << 63) - 1))}, &{flag})" for x in (e.a, e.b))
            if isinstance(e, (E.Min, E.Max)):
                return self._minmax(e, "min" if isinstance(e, E.Min) else "max", a, b)
            op = "floordiv" if isinstance(e, E.FloorDiv) else "floormod"
            self.helpers.setdefault(f"rvm_ck_{op}", _FLOOR.format(op))
            return f"rvm_ck_{op}({a}, {b}, &{flag})"
        if e.dtype.is_uint and e.dtype.bits == 64:
            self.helpers.setdefault("rvm_ck_u64", _FROM_U64)
            return f"rvm_ck_u64({self.expr(e)}, &{flag})"
        return f"((int64_t){self.expr(e)})"

    def print_BufferLoad(self, e):
        data = self.var_name(e.buffer.data)
        if id(e.buffer.data) in self.scalars:
            return data
        return self.render_load(e.buffer, e.indices[0])

    def render_load(self, buffer, index):
        """The C expression reading ``buffer[index]`` (the emitter guards it)."""
        text = f"{self.var_name(buffer.data)}[{self.expr(index)}]"
        return c_narrow.load(buffer.dtype, text) if c_narrow.is_narrow(buffer.dtype) else text

    def _branches(self, cond, a, b):
        """``cond ? a : b`` with the condition known inside each branch (and its index
        checks done: the condition runs first)."""
        c, checked = self.checks_in(lambda: self.expr(cond))
        self.prover.push_fact(cond, True)
        then = self.expr(a)
        self.prover.pop()
        self.prover.push_fact(cond, False)
        other = self.expr(b)
        self.prover.pop()
        self.forget_checks(checked)
        return f"({c} ? {then} : {other})"

    def _expect_args(self, e, count, float_args=False):
        """Refuses a call of intrinsic ``e.op`` without ``count`` arguments (all of a float
        type when ``float_args``): C would not compile it, or would convert silently."""
        args = e.args
        if len(args) != count:
            self.error(f"{e.op} takes {count} arguments, got {len(args)}")
        if float_args and not all(getattr(a, "dtype", None) is not None and a.dtype.is_float
                                  for a in args):
            found = ", ".join(str(getattr(a, "dtype", type(a).__name__)) for a in args)
            self.error(f"{e.op} needs float arguments, got {found}")

    def print_Call(self, e):
        op, args = e.op, e.args
        if op == "tir.if_then_else":
            self._expect_args(e, 3)
            return self._branches(args[0], args[1], args[2])
        if op in MATH:
            if not e.dtype.is_float:
                raise CodegenError(f"kernel '{self.name}': {op} needs a float type, "
                                   f"got {e.dtype}")
            self._expect_args(e, 2 if op in ("tir.pow", "tir.fmod") else 1, float_args=True)
            fn = MATH[op][e.dtype.bits == 64]
            return f"{fn}({', '.join(self.expr(a) for a in args)})"
        if op in ("tir.isnan", "tir.isinf", "tir.isfinite"):
            self._expect_args(e, 1, float_args=True)
            return f"{op[4:]}({self.expr(args[0])})"
        if op == "tir.call_extern":
            if self.safe:
                self.error(f"call_extern of {args[0]!r} is refused: kernels loaded from a file "
                           "may call only intrinsics and registered packed functions")
            return f"{args[0].value}({', '.join(self.expr(a) for a in args[1:])})"
        if op == CHECK_INDEX:
            return self.render_check_index(e)
        if op == "tir.call_packed":
            raise CodegenError(f"kernel '{self.name}': call_packed is supported as a statement "
                               "(T.evaluate(T.call_packed(...))), not inside an expression")
        raise CodegenError(f"kernel '{self.name}': no C rendering for intrinsic '{op}'")
