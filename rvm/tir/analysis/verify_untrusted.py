"""Typing and scoping rules for PrimFuncs read from an untrusted file, checked before codegen.

The code generator trusts what the pipeline guarantees: a let binds a value of
the variable's own type (C would truncate it silently, and the bounds prover
would reason about the untruncated value), handles are pointers never used
as numbers, every buffer over one piece of memory has the memory's element
type, and a variable is used only inside the scope that binds it. A file can
break each of these, so ``verify_untrusted`` checks them on every
deserialized kernel:

- ``let-type``: Let/LetStmt values have the variable's dtype;
- ``numeric-value``: every value is a scalar number or bool (no handle, no
  string, no vector), so a Cast is only ever between numeric types and a
  buffer's data pointer or a string constant never becomes an integer;
  strings appear only as assertion messages and packed-call arguments;
- ``index-type``: buffer indices, loop bounds and allocation extents are
  integers (loop bounds of the loop variable's dtype);
- ``buffer-type``: every buffer over one data variable (a parameter's or an
  allocation's memory) has one dtype, the allocation's own; stored values
  have the buffer's dtype;
- ``scope``: a variable is used only inside its binder (parameter, buffer
  shape, loop, let, allocation) and bound once per kernel;
- ``foreign-node``: no Var or Buffer is shared between two kernels (the
  serialized DAG allows it; each kernel must be self-contained), except a
  variable of both kernels' signatures (the kernels of one model share their
  symbolic dimensions, e.g. a batch size ``n``);
- ``unroll``: an unrolled loop has a constant extent of at most
  ``MAX_UNROLL_EXTENT``, and the product of the extents of the unrolled loops
  around any statement is at most ``MAX_UNROLL_PRODUCT`` (the C compiler
  copies the body that many times).

The walk is iterative (no recursion). An expression shared by several parents
is checked once per scope it appears in (the same variables visible), so a
serialized DAG is not expanded; statements are walked as a tree, whose size
deserialization capped (``rvm.tir.serialize.MAX_TREE_NODES``, computed per
node without expanding).
Any violation raises ``UntrustedTIRError`` naming the kernel, the rule and the
offending node.

>>> from rvm.tir import Var, PrimFunc, LetStmt, Evaluate
>>> x = Var("x", "int64")
>>> t = Var("t", "int8")
>>> verify_untrusted([("ok", PrimFunc([x], LetStmt(Var("u", "int64"), x, Evaluate(0))))])
>>> try:
...     verify_untrusted([("k", PrimFunc([x], LetStmt(t, x, Evaluate(0))))])
... except UntrustedTIRError as err:
...     print(err)
kernel 'k': let-type: let 't' of dtype int8 is bound to a value of dtype int64: x
"""
from rvm.ir.expr import PrimExpr
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.buffer import Buffer
from rvm.tir.op import CHECK_INDEX, index_message_parts
from rvm.tir.serialize import TIRFormatError

MAX_UNROLL_EXTENT = 64
MAX_UNROLL_PRODUCT = 1024
_PACKED_CALLS = ("tir.call_packed", "tir.call_extern")
_LOOP_KINDS = (S.ForKind.SERIAL, S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED)


class UntrustedTIRError(TIRFormatError):
    """A deserialized kernel that breaks a typing, scoping or size rule of untrusted TIR."""


def _show(node):
    text = node.name if isinstance(node, Buffer) else repr(node)
    return text if len(text) <= 120 else text[:117] + "..."


def _is_integer(dtype):
    return (dtype.is_int or dtype.is_uint) and dtype.lanes == 1


class _Checker:
    """Walks one kernel with an explicit work stack; ``owner`` is shared across kernels."""

    def __init__(self, name, owner):
        self.name = name
        self.owner = owner      # id(Var or Buffer) -> (kernel, whether of its signature)
        self.visible = set()    # ids of variables in scope here
        self.bound = set()      # ids of variables bound so far in this kernel
        self.memory = {}        # id(data var) -> (dtype, what fixed it)
        self.unroll = [1]       # product of the unrolled extents around here
        self.signature = set()  # ids of the parameters and parameter dimensions
        self.scope = [0]        # ids of the nested binders here (0: the kernel)
        self.scopes = 0         # binders entered so far
        self.seen = set()       # (id(expression), scope id) already checked
        self.work = []

    def fail(self, rule, detail):
        raise UntrustedTIRError(f"kernel '{self.name}': {rule}: {detail}")

    def own(self, node):
        """Records that ``node`` is this kernel's. Only a variable of the signatures of both
        kernels (a parameter or a parameter's dimension, e.g. a batch size ``n`` shared by
        the kernels of one model) may be shared."""
        signature = id(node) in self.signature
        other, shared = self.owner.setdefault(id(node), (self.name, signature))
        if other != self.name and not (signature and shared):
            what = f"buffer '{node.name}'" if isinstance(node, Buffer) \
                else f"variable '{node.name_hint}'"
            self.fail("foreign-node", f"{what} also belongs to kernel '{other}'; expected "
                      "every kernel to have its own variables and buffers (only parameters "
                      "and their dimensions may be shared)")

    # ---- scopes
    def bind(self, var, how):
        if not isinstance(var, E.Var):
            self.fail("scope", f"{how} binds {type(var).__name__}, expected a Var")
        self.own(var)
        if id(var) in self.bound:
            self.fail("scope", f"variable '{var.name_hint}' is bound again (by {how}); "
                      "expected each variable bound once per kernel")
        self.bound.add(id(var))
        self.visible.add(id(var))
        self.scopes += 1
        self.scope.append(self.scopes)

    def unbind(self, var):
        self.visible.discard(id(var))
        self.scope.pop()

    def use(self, var, how):
        self.own(var)
        if id(var) not in self.visible:
            self.fail("scope", f"variable '{var.name_hint}' is {how} outside the scope that "
                      "binds it")

    # ---- work stack: handlers push (function, argument) pairs, run last-pushed first
    def later(self, *steps):
        """Schedules ``steps`` to run in the order given (before anything scheduled earlier)."""
        self.work.extend(reversed(steps))

    def run(self):
        while self.work:
            fn, arg = self.work.pop()
            fn(arg)

    # ---- expressions
    def value(self, e):
        key = (id(e), self.scope[-1])
        if key in self.seen:  # a shared node, already checked with the same variables in scope
            return
        self.seen.add(key)
        if not isinstance(e, PrimExpr):
            self.fail("numeric-value", f"expected an expression, found {type(e).__name__} "
                      f"{_show(e)}")
        if isinstance(e, E.StringImm):
            self.fail("numeric-value", f"a string constant used as a value: {_show(e)}; "
                      "expected strings only as assertion messages or packed-call arguments")
        if isinstance(e, E.Var) and e.dtype.is_handle:
            self.fail("numeric-value", f"handle variable '{e.name_hint}' used as a value; "
                      "expected a pointer only as a buffer's data")
        if isinstance(e, E.Cast):
            inner = e.value.dtype
            if not _numeric(e.dtype) or not _numeric(inner):
                self.fail("numeric-value", f"cast from {inner} to {e.dtype}: {_show(e)}; "
                          "expected a cast between scalar numeric types")
        if not _numeric(e.dtype):
            self.fail("numeric-value", f"{type(e).__name__} of dtype {e.dtype}: {_show(e)}; "
                      "expected a scalar number or bool")
        handler = _EXPR.get(type(e))
        if handler is None:
            self.fail("numeric-value", f"unexpected expression {type(e).__name__}")
        handler(self, e)

    def e_var(self, e):
        self.use(e, "used")

    def e_leaf(self, e):
        pass

    def e_unary(self, e):
        self.later((self.value, e.a if hasattr(e, "a") else e.value))

    def e_binary(self, e):
        self.later((self.value, e.a), (self.value, e.b))

    def e_select(self, e):
        self.later((self.value, e.condition), (self.value, e.true_value),
                   (self.value, e.false_value))

    def e_let(self, e):
        self.check_let(e)
        self.later((self.value, e.value), (self.bind_let, e.var), (self.value, e.body),
                   (self.unbind, e.var))

    def bind_let(self, var):
        self.bind(var, "a let")

    def check_let(self, node):
        if node.value.dtype != node.var.dtype:
            self.fail("let-type", f"let '{node.var.name_hint}' of dtype {node.var.dtype} is "
                      f"bound to a value of dtype {node.value.dtype}: {_show(node.value)}")

    def e_call(self, e):
        if e.op == CHECK_INDEX:
            self.check_index(e)
            return
        packed = e.op in _PACKED_CALLS
        steps = []
        for arg in e.args:
            if packed and isinstance(arg, E.StringImm):
                continue
            steps.append((self.buffer if packed and isinstance(arg, Buffer) else self.value,
                          arg))
        self.later(*steps)

    def check_index(self, e):
        if len(e.args) != 4 or not isinstance(e.args[3], E.StringImm):
            self.fail("check-index", f"{_show(e)}; expected {CHECK_INDEX}(index, low, high, "
                      "message)")
        try:
            index_message_parts(e.args[3].value)
        except ValueError as err:
            self.fail("check-index", str(err))
        for arg in e.args[:3]:
            if not isinstance(arg, PrimExpr) or arg.dtype != "int64":
                self.fail("check-index", f"{_show(arg)} in {_show(e)}; expected an int64 "
                          "index and bounds")
        self.later(*[(self.value, arg) for arg in e.args[:3]])

    def e_load(self, e):
        self.access(e.buffer, e.indices)

    def access(self, buf, indices, *more):
        for index in indices:
            if not isinstance(index, PrimExpr) or not _is_integer(index.dtype):
                self.fail("index-type", f"buffer '{buf.name}' indexed by {_show(index)}; "
                          "expected scalar integer indices")
        self.later((self.buffer, buf), *[(self.value, index) for index in indices], *more)

    def buffer(self, buf):
        if not isinstance(buf, Buffer):
            self.fail("buffer-type", f"expected a Buffer, found {type(buf).__name__}")
        self.own(buf)
        self.use(buf.data, f"used as the data of buffer '{buf.name}'")
        self.memory_is(buf.data, buf.dtype, f"buffer '{buf.name}'")
        dims = buf.shape + buf.strides + (buf.elem_offset,)
        for dim in dims:
            if not _is_integer(dim.dtype):
                self.fail("index-type", f"buffer '{buf.name}' has a dimension {_show(dim)}; "
                          "expected scalar integers")
        self.later(*[(self.value, dim) for dim in dims])

    def memory_is(self, data, dtype, what):
        known = self.memory.setdefault(id(data), (dtype, what))
        if known[0] != dtype:
            self.fail("buffer-type", f"{what} views the memory of '{data.name_hint}' as "
                      f"{dtype}, but {known[1]} has it as {known[0]}; expected one dtype "
                      "per memory")

    # ---- statements
    def stmt(self, s):
        handler = _STMT.get(type(s))
        if handler is None:
            self.fail("scope", f"unexpected statement {type(s).__name__}")
        handler(self, s)

    def s_let(self, s):
        self.check_let(s)
        self.later((self.value, s.value), (self.bind_let, s.var), (self.stmt, s.body),
                   (self.unbind, s.var))

    def s_assert(self, s):
        message = [] if isinstance(s.message, E.StringImm) else [(self.value, s.message)]
        self.later((self.value, s.condition), *message, (self.stmt, s.body))

    def s_for(self, s):
        var = s.loop_var
        if not isinstance(var, E.Var) or not _is_integer(var.dtype):
            self.fail("index-type", f"loop variable {_show(var)} of dtype {var.dtype}; "
                      "expected a scalar integer")
        for what, bound in (("start", s.min), ("extent", s.extent)):
            if bound.dtype != var.dtype:
                self.fail("index-type", f"loop '{var.name_hint}' of dtype {var.dtype} has a "
                          f"{what} of dtype {bound.dtype}: {_show(bound)}")
        if s.kind not in _LOOP_KINDS:
            self.fail("scope", f"loop '{var.name_hint}' of kind {s.kind!r} cannot be generated")
        factor = self.unroll_factor(s)
        self.later((self.value, s.min), (self.value, s.extent),
                   (self.annotation, tuple(s.annotations.values())), (self.bind_loop, var),
                   (self.unroll.append, self.unroll[-1] * factor), (self.stmt, s.body),
                   (self.end_loop, var))

    def unroll_factor(self, s):
        if s.kind != S.ForKind.UNROLLED:
            return 1
        extent = s.extent.value if isinstance(s.extent, E.IntImm) else None
        if extent is None or extent > MAX_UNROLL_EXTENT:
            self.fail("unroll", f"unrolled loop '{s.loop_var.name_hint}' has extent "
                      f"{_show(s.extent)}; expected a constant of at most {MAX_UNROLL_EXTENT}")
        product = self.unroll[-1] * max(extent, 1)
        if product > MAX_UNROLL_PRODUCT:
            self.fail("unroll", f"unrolled loop '{s.loop_var.name_hint}' makes {product} "
                      f"copies of its body with the unrolled loops around it; expected at most "
                      f"{MAX_UNROLL_PRODUCT}")
        return max(extent, 1)

    def bind_loop(self, var):
        self.bind(var, "a loop")

    def end_loop(self, var):
        self.unroll.pop()
        self.unbind(var)

    def annotation(self, value):
        """An attribute value: nodes in it are variables in scope (or numeric values)."""
        if isinstance(value, tuple):
            self.later(*[(self.annotation, item) for item in value])
        elif isinstance(value, E.Var):
            self.use(value, "named by an annotation")
        elif isinstance(value, PrimExpr):
            self.value(value)

    def s_while(self, s):
        self.later((self.value, s.condition), (self.stmt, s.body))

    def s_store(self, s):
        if s.value.dtype != s.buffer.dtype:
            self.fail("buffer-type", f"a value of dtype {s.value.dtype} stored into buffer "
                      f"'{s.buffer.name}' of dtype {s.buffer.dtype}")
        self.access(s.buffer, s.indices, (self.value, s.value))

    def s_allocate(self, s):
        var = s.buffer_var
        if not isinstance(var, E.Var) or not var.dtype.is_handle:
            self.fail("buffer-type", f"allocation binds {_show(var)}; expected a handle Var")
        if s.dtype.is_handle:
            self.fail("buffer-type", f"allocation '{var.name_hint}' of handles")
        for extent in s.extents:
            if not _is_integer(extent.dtype):
                self.fail("index-type", f"allocation '{var.name_hint}' has an extent "
                          f"{_show(extent)}; expected scalar integers")
        self.later(*[(self.value, extent) for extent in s.extents],
                   (self.annotation, tuple(s.annotations.values())),
                   (self.value, s.condition), (self.bind_allocation, s),
                   (self.stmt, s.body), (self.unbind, var))

    def bind_allocation(self, s):
        self.bind(s.buffer_var, "an allocation")
        self.memory_is(s.buffer_var, s.dtype, f"allocation '{s.buffer_var.name_hint}'")

    def s_decl_buffer(self, s):
        self.later((self.buffer, s.buffer), (self.stmt, s.body))

    def s_seq(self, s):
        self.later(*[(self.stmt, item) for item in s.seq])

    def s_if(self, s):
        orelse = [] if s.else_case is None else [(self.stmt, s.else_case)]
        self.later((self.value, s.condition), (self.stmt, s.then_case), *orelse)

    def s_evaluate(self, s):
        self.later((self.value, s.value))

    # ---- the kernel
    def check(self, func):
        for key, buf in func.buffer_map.items():
            if not isinstance(buf, Buffer) or not any(key is p for p in func.params):
                self.fail("scope", f"buffer map entry {_show(key)} is not a parameter bound "
                          "to a Buffer")
        dims = [(dim, buf) for buf in func.buffer_map.values() for dim in buf.shape
                if isinstance(dim, E.Var)]
        self.signature = {id(p) for p in func.params} | {id(dim) for dim, _ in dims}
        for param in func.params:
            self.bind(param, "a parameter")
        for buf in func.buffer_map.values():
            self.own(buf)
            self.bind(buf.data, f"parameter buffer '{buf.name}'")
        for dim, buf in dims:
            if id(dim) not in self.visible:
                self.bind(dim, f"the shape of parameter buffer '{buf.name}'")
        self.later(*[(self.buffer, buf) for buf in func.buffer_map.values()],
                   (self.annotation, tuple(func.attrs.values())), (self.stmt, func.body))
        self.run()


def _numeric(dtype):
    return dtype.lanes == 1 and (dtype.is_int or dtype.is_uint or dtype.is_float
                                 or dtype.is_bool)


_EXPR = {E.Var: _Checker.e_var, E.SizeVar: _Checker.e_var, E.IntImm: _Checker.e_leaf,
         E.FloatImm: _Checker.e_leaf, E.Cast: _Checker.e_unary, E.Not: _Checker.e_unary,
         E.Select: _Checker.e_select, E.Let: _Checker.e_let, E.Call: _Checker.e_call,
         E.BufferLoad: _Checker.e_load}
for _cls in (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max,
             E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or):
    _EXPR[_cls] = _Checker.e_binary
_STMT = {S.LetStmt: _Checker.s_let, S.AssertStmt: _Checker.s_assert, S.For: _Checker.s_for,
         S.While: _Checker.s_while, S.BufferStore: _Checker.s_store,
         S.Allocate: _Checker.s_allocate, S.DeclBuffer: _Checker.s_decl_buffer,
         S.SeqStmt: _Checker.s_seq, S.IfThenElse: _Checker.s_if,
         S.Evaluate: _Checker.s_evaluate}


def verify_untrusted(named_funcs):
    """Checks deserialized (name, PrimFunc) pairs against the rules above.

    Returns None; raises UntrustedTIRError naming the kernel, the rule and the node.
    """
    owner = {}
    for name, func in named_funcs:
        _Checker(name, owner).check(func)
