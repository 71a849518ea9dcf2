"""The reference evaluator of lowered TIR: each node becomes a Python closure.

This is the living definition of what a lowered kernel computes, and the C
backend is tested against it. Values follow the C backend's types: integers
are Python ints wrapped to their dtype's width on casts and stores (division
by zero gives 0, as in the C backend, instead of trapping), floats are
numpy scalars of their dtype (so float32 arithmetic rounds like C's), except
the narrow floats (float16, bfloat16, float8, float4), which compute as float32
values rounded to the narrow type when cast or stored, as the C backend computes
them; booleans are Python bools. Loops run in order whatever their kind.

``Evaluator(name).stmt(stmt)`` returns ``run(env)``, where ``env`` maps ``id(var)``
to the value of each variable (numpy 1-d arrays for buffer data);
``evaluate_prim_func`` runs a whole lowered PrimFunc on tensors.
"""
import math

import numpy as np

from rvm.runtime._ffi import _bridge
from rvm.runtime.ndarray import from_dlpack
from rvm.runtime.packed_func import get_global_func
from rvm.support.errors import RVMError
from rvm.tir import expr as E
from rvm.tir.buffer import Buffer
from rvm.tir.op import CHECK_INDEX, index_message_parts


class EvalError(RVMError, ValueError):
    """The evaluator met a node it does not define."""


def _trunc_div(a, b):
    if b == 0:
        return 0  # as in the C backend: integer division never traps
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _trunc_mod(a, b):
    return 0 if b == 0 else a - b * _trunc_div(a, b)


def _value_type(dtype):
    """The numpy scalar type values of the float ``dtype`` compute in."""
    return np.float32 if dtype.is_narrow_float else dtype.numpy_dtype.type


def _narrow(dtype, source=None):
    """A function rounding a value (of dtype ``source``) to the narrow float ``dtype``,
    kept as float32: float16 from float64 directly (as numpy converts), the other
    formats through float32 (as ml_dtypes converts)."""
    npt = dtype.numpy_dtype.type
    if dtype == "float16" and source == "float64":
        return lambda v: np.float32(np.float16(v))
    return lambda v: np.float32(npt(np.float32(v)))


def _wrap(dtype):
    """A function bringing a Python number into ``dtype``'s range (C conversion rules)."""
    if dtype.is_bool:
        return lambda v: bool(v)
    if dtype.is_narrow_float:
        return _narrow(dtype)
    if dtype.is_float:
        npt = dtype.numpy_dtype.type
        return npt
    bits = dtype.bits
    mask = (1 << bits) - 1
    if dtype.is_uint:
        return lambda v: int(v) & mask
    half = 1 << (bits - 1)
    return lambda v: ((int(v) + half) & mask) - half


def _float_to_int(dtype):
    """float -> integer conversion toward zero; NaN and out-of-range values give what x86
    gives (the "integer indefinite" minimum for signed types, 0 for unsigned)."""
    bits = dtype.bits
    lo, hi = (0, (1 << bits) - 1) if dtype.is_uint else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    fallback = 0 if dtype.is_uint else lo

    def convert(value):
        value = float(value)
        if not math.isfinite(value):
            return fallback
        result = math.trunc(value)
        return result if lo <= result <= hi else fallback

    return convert


def _trunc_or_zero(value):
    value = float(value)
    return math.trunc(value) if abs(value) < 9.2e18 else 0


def _scalar_reader(dtype):
    if dtype.is_narrow_float:
        return np.float32  # widened exactly
    if dtype.is_float:
        return lambda x: x
    if dtype.is_bool:
        return bool
    return int


_BINARY = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
    E.And: lambda a, b: bool(a) and bool(b),
    E.Or: lambda a, b: bool(a) or bool(b),
    E.Min: lambda a, b: a if a < b else b,
    E.Max: lambda a, b: a if a > b else b,
    E.FloorDiv: lambda a, b: a // b if b else 0,
    E.FloorMod: lambda a, b: a % b if b else 0,
}
_MATH = {
    "tir.exp": np.exp, "tir.exp2": np.exp2, "tir.log": np.log, "tir.log2": np.log2,
    "tir.log10": np.log10, "tir.log1p": np.log1p, "tir.sqrt": np.sqrt, "tir.tanh": np.tanh,
    "tir.sin": np.sin, "tir.cos": np.cos, "tir.tan": np.tan, "tir.asin": np.arcsin,
    "tir.acos": np.arccos, "tir.atan": np.arctan, "tir.sinh": np.sinh, "tir.cosh": np.cosh,
    "tir.asinh": np.arcsinh, "tir.acosh": np.arccosh, "tir.atanh": np.arctanh,
    "tir.fabs": np.abs, "tir.floor": np.floor, "tir.ceil": np.ceil, "tir.round": np.rint,
    "tir.trunc": np.trunc, "tir.pow": np.power, "tir.fmod": np.fmod,
    "tir.erf": math.erf, "tir.isnan": np.isnan, "tir.isinf": np.isinf,
    "tir.isfinite": np.isfinite,
    "tir.sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tir.rsqrt": lambda x: 1 / np.sqrt(x),
}


class Evaluator:
    """Compiles lowered TIR nodes to closures over an environment dict."""

    def __init__(self, name):
        self.name = name

    # ---- expressions
    def expr(self, e):
        """A closure ``env -> value`` evaluating expression ``e``."""
        method = getattr(self, f"_expr_{type(e).__name__}", None)
        if method is not None:
            return method(e)
        op = _BINARY.get(type(e))
        if op is None:
            raise EvalError(f"kernel '{self.name}': the python target cannot evaluate "
                            f"{type(e).__name__} {e!r}")
        a, b = self.expr(e.a), self.expr(e.b)
        if type(e) in (E.Add, E.Sub, E.Mul, E.FloorDiv) and not e.dtype.is_float:
            wrap = _wrap(e.dtype)
            return lambda env: wrap(op(a(env), b(env)))
        return lambda env: op(a(env), b(env))

    def _expr_Var(self, e):
        key = id(e)
        return lambda env: env[key]

    _expr_SizeVar = _expr_Var

    def _expr_IntImm(self, e):
        value = bool(e.value) if e.dtype.is_bool else e.value
        return lambda env: value

    def _expr_FloatImm(self, e):
        if e.dtype.is_narrow_float:
            value = _narrow(e.dtype, "float64")(e.value)
        else:
            value = e.dtype.numpy_dtype.type(e.value)
        return lambda env: value

    def _expr_StringImm(self, e):
        value = e.value
        return lambda env: value

    def _expr_Cast(self, e):
        inner, src = self.expr(e.value), e.value.dtype
        if e.dtype.is_bool:
            return lambda env: bool(inner(env) != 0)
        if e.dtype.is_narrow_float:
            narrow = _narrow(e.dtype, src)
            return lambda env: narrow(inner(env))
        if e.dtype.is_float:
            npt = e.dtype.numpy_dtype.type
            return lambda env: npt(inner(env))
        wrap = _wrap(e.dtype)
        if src.is_float and e.dtype.bits < 8:  # sub-byte: toward zero, wrapped, as ml_dtypes
            return lambda env: wrap(_trunc_or_zero(inner(env)))
        if src.is_float:
            convert = _float_to_int(e.dtype)
            return lambda env: convert(inner(env))
        return lambda env: wrap(int(inner(env)))

    def _expr_Div(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if e.dtype.is_float:
            return lambda env: a(env) / b(env)
        wrap = _wrap(e.dtype)
        return lambda env: wrap(_trunc_div(a(env), b(env)))

    def _expr_Mod(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if e.dtype.is_float:
            return lambda env: np.fmod(a(env), b(env))
        return lambda env: _trunc_mod(a(env), b(env))

    def _expr_Not(self, e):
        a = self.expr(e.a)
        return lambda env: not a(env)

    def _expr_Select(self, e):
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)

        def select(env):
            tv, fv = t(env), f(env)  # both sides are evaluated, as in TIR
            return tv if c(env) else fv

        return select

    def _expr_Let(self, e):
        key, value, body = id(e.var), self.expr(e.value), self.expr(e.body)

        def let(env):
            env[key] = value(env)
            return body(env)

        return let

    def _expr_BufferLoad(self, e):
        key, index = id(e.buffer.data), self.expr(e.indices[0])
        read = _scalar_reader(e.dtype)
        return lambda env: read(env[key][index(env)])

    def _expr_Call(self, e):
        op = e.op
        args = [self.expr(a) for a in e.args if not isinstance(a, Buffer)]
        if op == "tir.if_then_else":
            c, t, f = args
            return lambda env: t(env) if c(env) else f(env)
        if op in _MATH:
            fn = _MATH[op]
            if op in ("tir.isnan", "tir.isinf", "tir.isfinite"):
                return lambda env: bool(fn(args[0](env)))
            npt = _value_type(e.dtype)
            return lambda env: npt(fn(*[a(env) for a in args]))
        if op == "tir.call_packed":
            return self._call_packed(e)
        if op == CHECK_INDEX:
            return self._check_index(e, args)
        raise EvalError(f"kernel '{self.name}': the python target has no definition of "
                        f"intrinsic '{op}'")

    def _check_index(self, e, args):
        if len(e.args) != 4 or not isinstance(e.args[3], E.StringImm):
            raise EvalError(f"kernel '{self.name}': {CHECK_INDEX} takes an index, its bounds "
                            f"and a message, got {len(e.args)} arguments")
        parts = index_message_parts(e.args[3].value)
        index, low, high = args[:3]

        def check(env):
            value, lo, hi = index(env), low(env), high(env)
            if lo <= value < hi:
                return value
            text = "".join(p + str(v) for p, v in zip(parts, (value, lo, hi))) + parts[3]
            raise IndexError(f"{self.name}: {text}")

        return check

    def _call_packed(self, e):
        fname = e.args[0].value
        makers = []
        for arg in e.args[1:]:
            if isinstance(arg, Buffer):
                key = id(arg.data)
                dims = [self.expr(d) for d in arg.shape]
                makers.append(lambda env, key=key, dims=dims: from_dlpack(
                    env[key][:_prod(d(env) for d in dims)].reshape([d(env) for d in dims])))
            elif isinstance(arg, E.Var) and arg.dtype.is_handle:
                key = id(arg)  # a buffer's data: its address, as the C backend passes it
                makers.append(lambda env, key=key: env[key].ctypes.data)
            else:
                makers.append(self.expr(arg))

        def call(env):
            func = get_global_func(fname, allow_missing=True)
            if func is None:
                raise ValueError(f"{self.name}: global function '{fname}' is not registered")
            func(*[m(env) for m in makers])
            return 0

        return call

    # ---- statements
    def stmt(self, s):
        """A closure ``env -> None`` running statement ``s``."""
        method = getattr(self, f"_stmt_{type(s).__name__}", None)
        if method is None:
            raise EvalError(f"kernel '{self.name}': the python target cannot run statement "
                            f"{type(s).__name__}; lower blocks first")
        return method(s)

    def _stmt_SeqStmt(self, s):
        parts = [self.stmt(x) for x in s.seq]

        def seq(env):
            for part in parts:
                part(env)

        return seq

    def _stmt_BufferStore(self, s):
        key, index, value = id(s.buffer.data), self.expr(s.indices[0]), self.expr(s.value)
        wrap = _wrap(s.buffer.dtype)

        def store(env):
            env[key][index(env)] = wrap(value(env))

        return store

    def _stmt_LetStmt(self, s):
        key, value, body = id(s.var), self.expr(s.value), self.stmt(s.body)

        def let(env):
            env[key] = value(env)
            body(env)

        return let

    def _stmt_IfThenElse(self, s):
        c, then = self.expr(s.condition), self.stmt(s.then_case)
        other = self.stmt(s.else_case) if s.else_case is not None else None

        def branch(env):
            if c(env):
                then(env)
            elif other is not None:
                other(env)

        return branch

    def _stmt_While(self, s):
        c, body = self.expr(s.condition), self.stmt(s.body)

        def loop(env):
            while c(env):
                body(env)

        return loop

    def _stmt_AssertStmt(self, s):
        c, body = self.expr(s.condition), self.stmt(s.body)
        message = s.message.value if isinstance(s.message, E.StringImm) else repr(s.message)

        def check(env):
            if not c(env):
                raise ValueError(f"{self.name}: {message}")
            body(env)

        return check

    def _stmt_DeclBuffer(self, s):
        return self.stmt(s.body)

    def _stmt_Allocate(self, s):
        key, extent, body = id(s.buffer_var), self.expr(s.extents[0]), self.stmt(s.body)
        npdtype, name = s.dtype.numpy_dtype, self.name

        def allocate(env):  # charged to the running VM's memory_limit while it lives
            count = max(extent(env), 1)
            nbytes = count * npdtype.itemsize
            token = _bridge.kernel_workspace_claim(nbytes, name)
            try:
                env[key] = np.zeros(count, npdtype)
                body(env)
            finally:
                env.pop(key, None)
                _bridge.kernel_workspace_release(token, nbytes)

        return allocate

    def _stmt_For(self, s):
        key, lo, ext, body = id(s.loop_var), self.expr(s.min), self.expr(s.extent), \
            self.stmt(s.body)

        def loop(env):
            start = lo(env)
            for v in range(start, start + ext(env)):
                env[key] = v
                body(env)

        return loop

    def _stmt_Evaluate(self, s):
        value = self.expr(s.value)
        return lambda env: value(env)


def _prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def evaluate_prim_func(func, tensors, name="main"):
    """Runs lowered PrimFunc ``func``, whose parameters are all buffers, on ``tensors`` (one
    NDArray or C-contiguous numpy array per parameter, of its buffer's dtype and rank);
    outputs are written in place. A symbolic dimension is the extent where it first
    appears; other shapes are the caller's to check (the python target checks them all).

    >>> from rvm import te
    >>> from rvm.tir.transform.pipeline import lower_module
    >>> A = te.placeholder((3,), name="A")
    >>> B = te.compute((3,), lambda i: A[i] * 2.0, name="B")
    >>> func = lower_module(te.create_prim_func([A, B]))["main"]
    >>> a, b = np.arange(3, dtype="float32"), np.zeros(3, "float32")
    >>> evaluate_prim_func(func, [a, b])
    >>> b.tolist()
    [0.0, 2.0, 4.0]
    """
    if len(tensors) != len(func.params):
        raise EvalError(f"kernel '{name}': expected {len(func.params)} tensors, "
                        f"got {len(tensors)}")
    env = {}
    for var, tensor in zip(func.params, tensors):
        buffer = func.buffer_map.get(var)
        if buffer is None:
            raise EvalError(f"kernel '{name}': parameter '{var.name_hint}' is not a buffer")
        data = tensor if isinstance(tensor, np.ndarray) else tensor._numpy_view()
        for dim, extent in zip(buffer.shape, data.shape):
            if isinstance(dim, E.Var):
                env.setdefault(id(dim), extent)
        env[id(buffer.data)] = data.reshape(-1)
    run = Evaluator(name).stmt(func.body)
    with np.errstate(all="ignore"):
        run(env)
