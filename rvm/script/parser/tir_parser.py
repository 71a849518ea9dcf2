"""Parsing ``@T.prim_func`` functions: buffers, loops, blocks and TIR statements."""
import ast

from rvm.ir.expr import PrimExpr
from rvm.tir import expr as _e
from rvm.tir import op as _op
from rvm.tir import stmt as _s
from rvm.tir.buffer import Buffer, decl_buffer
from rvm.tir.function import PrimFunc
from rvm.script.parser.core import CONVERTED_ERRORS, Builtin, ScriptParser
from rvm.script.parser.diagnostics import ParseError
from rvm.script.parser.tir_blocks import (
    AXIS_KINDS, Frame, block_axes, block_statement, bounds, parse_for, parse_with,
)
from rvm.script.parser.tir_intrinsics import meta_var
from rvm.script.parser.tir_builtins import DTYPES, TIR_TABLE, DTypeAnnotation, Spec, VarDecl
from rvm.script.parser.tir_ops import build_binop

_BLOCK_STATEMENTS = ("reads", "writes", "where", "block_attr")


def _is_root(stmt):
    return isinstance(stmt, _s.BlockRealize) and stmt.block.name_hint == "root"


def _asserts_over_root(stmt):
    """Whether ``stmt`` is one or more asserts whose body is a root block."""
    if not isinstance(stmt, _s.AssertStmt):
        return False
    while isinstance(stmt, _s.AssertStmt):
        stmt = stmt.body
    return _is_root(stmt)


def _contains_block(stmt):
    found = []

    def visit(node):
        """Walks ``x`` recording what the caller looks for."""
        if isinstance(node, _s.BlockRealize):
            found.append(node)
        elif isinstance(node, _s.Stmt):
            for _, value in node.fields():
                if isinstance(value, _s.Stmt):
                    visit(value)
                elif isinstance(value, tuple):
                    for item in value:
                        if isinstance(item, _s.Stmt):
                            visit(item)

    visit(stmt)
    return bool(found)


class TIRParser(ScriptParser):
    """Parses one PrimFunc from its ``ast.FunctionDef``."""

    tables = {"tir": TIR_TABLE}

    def __init__(self, source, env=None, aliases=None):
        super().__init__(source, env, aliases)
        self.frames = []
        self.loops = {}
        self.let_vars = {}  # name -> the variable the last LetStmt of that name bound
        self.attrs = {}
        self.buffer_map = {}
        self.params = []

    # -- values --------------------------------------------------------------------------
    def ir_binop(self, node, op, lhs, rhs):
        """``lhs <op> rhs`` where an operand is IR (dialects define it)."""
        return build_binop(self, node, op, lhs, rhs)

    def logical_not(self, value, node):
        """``not value`` for Python or IR values."""
        return _op.logical_not(value) if isinstance(value, PrimExpr) else not value

    def eval_Call(self, node):
        """Evaluates an ast.Call node; ``T.Let(body, where={x: value})`` binds ``x`` first."""
        if self.dotted(node.func) != "tir.Let":
            return super().eval_Call(node)
        where = next((kw.value for kw in node.keywords if kw.arg == "where"), None)
        if len(node.args) != 1 or not isinstance(where, ast.Dict) or len(where.keys) != 1 or \
                not isinstance(where.keys[0], ast.Name):
            raise self.error(node, "expected T.Let(body, where={name: value})")
        value = _op.convert(self.eval(where.values[0]))
        var = _e.Var(where.keys[0].id, value.dtype)
        with self.scope():
            self.define(var.name_hint, var)
            body = _op.convert(self.eval(node.args[0]))
        return _e.Let(var, value, body)

    def subscript(self, value, node):
        """``value[...]`` for the indexable values of the dialect."""
        if isinstance(value, Buffer):
            return buffer_access(self, value, node)
        return super().subscript(value, node)

    # -- functions -----------------------------------------------------------------------
    def parse_function(self, fdef, name, private=False):
        """The PrimFunc of ``fdef``; module functions get ``global_symbol`` unless private."""
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(fdef, "prim_func parameters must be plain 'name: annotation' pairs")
        frame = Frame("function")
        self.frames.append(frame)
        for arg in args.args:
            self.parse_param(arg)
        body = self.parse_body(fdef.body, fdef)
        self.frames.pop()
        if frame.alloc_buffers or _contains_block(body):
            # asserts written above an explicit root block (checks on the arguments, as the
            # printer writes them) stay above it
            if not _is_root(body) and not (not frame.alloc_buffers and _asserts_over_root(body)):
                root = _s.Block([], [], [], "root", body, alloc_buffers=frame.alloc_buffers)
                body = _s.BlockRealize([], True, root)
        attrs = dict(self.attrs)
        if not private and "global_symbol" not in attrs:
            attrs["global_symbol"] = name
        return PrimFunc(self.params, body, buffer_map=self.buffer_map, attrs=attrs,
                        span=self.span(fdef))

    def let_var(self, name, dtype):
        """The variable a LetStmt binds to ``name``: the one an earlier LetStmt of the
        function bound to that name and dtype once its scope has ended (the printer gives a
        variable bound twice one name, and distinct LetStmt variables distinct names),
        else a new one."""
        old = self.let_vars.get(name)
        if old is not None and old.dtype == dtype and not self.lookup_local(name)[0]:
            return old
        var = _e.Var(name, dtype)
        self.let_vars[name] = var
        return var

    def parse_param(self, arg):
        """Adds one parameter: a handle, a T.Buffer annotation or a scalar."""
        if arg.annotation is None:
            raise self.error(arg, f"parameter '{arg.arg}' needs an annotation; expected "
                                  "T.handle, T.Buffer((...), dtype) or a dtype such as T.int32")
        value = self.eval(arg.annotation)
        if isinstance(value, Builtin) and value.name in DTYPES + ("handle",):
            value = DTypeAnnotation(value.name)
        if isinstance(value, DTypeAnnotation):
            var = _e.Var(arg.arg, value.dtype)
            self.params.append(var)
            self.define(arg.arg, var)
        elif isinstance(value, Spec) and value.kind == "Buffer":
            buf = self.make_buffer(value, arg.arg)
            var = _e.Var(arg.arg, "handle")
            self.params.append(var)
            self.buffer_map[var] = buf
            self.define(arg.arg, buf)
        else:
            raise self.error(arg.annotation, f"parameter '{arg.arg}': expected T.handle, "
                                             "T.Buffer((...), dtype) or a dtype such as T.int32")

    def make_buffer(self, spec, name, data=None):
        """A Buffer from the arguments of T.Buffer / T.alloc_buffer / T.match_buffer."""
        args = list(spec.args)
        kwargs = dict(spec.kwargs)
        if spec.kind == "match_buffer":
            args = args[1:]
        if not args and "shape" not in kwargs:
            raise self.error(spec.node, f"T.{spec.kind} expects a shape")
        shape = _take(args, kwargs, "shape", None)
        dtype = _take(args, kwargs, "dtype", "float32")
        data = kwargs.pop("data", data)
        strides = kwargs.pop("strides", None)
        elem_offset = kwargs.pop("elem_offset", None)
        scope = _take(args, kwargs, "scope", "global")
        for ignored in ("align", "offset_factor", "buffer_type", "axis_separators"):
            kwargs.pop(ignored, None)
        if args or kwargs:
            extra = list(kwargs) or [repr(a) for a in args]
            raise self.error(spec.node, f"T.{spec.kind}: unexpected argument(s) {extra}")
        if isinstance(shape, (int, PrimExpr)):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise self.error(spec.node, f"T.{spec.kind}: expected a shape tuple, got "
                                        f"{type(shape).__name__}")
        for dim in shape:
            if not isinstance(dim, (int, PrimExpr)) or isinstance(dim, bool):
                raise self.error(spec.node, f"T.{spec.kind}: shape dimensions must be ints or "
                                            f"integer expressions, got {dim!r}")
        return decl_buffer(tuple(shape), dtype, name, data=data, strides=strides,
                           elem_offset=elem_offset, scope=scope)

    # -- statement sequences ------------------------------------------------------------
    def parse_body(self, stmts, owner):
        """One Stmt for a list of ast statements (binders such as LetStmt take the rest)."""
        out = []
        for k, node in enumerate(stmts):
            stmt = self.parse_stmt(node, stmts[k + 1:])
            if isinstance(stmt, _Rest):
                out.append(stmt.stmt)
                break
            if stmt is not None:
                out.append(stmt)
        if not out:
            return _s.Evaluate(_op.const(0))
        return _s.stmt_seq(*out)

    def parse_stmt(self, node, rest):
        """The Stmt of one ast statement (None for declarations, _Rest for binders)."""
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported statement ({type(node).__name__}) in a "
                                   "prim_func; expected an assignment, for, with, if, while, "
                                   "assert or a call")
        try:
            return method(node, rest)
        except ParseError:
            raise
        except CONVERTED_ERRORS as err:  # an IR constructor rejected what the statement built
            raise self.error(node, str(err)) from None

    def stmt_Pass(self, node, rest):
        """Parses an ast.Pass statement."""
        return None

    def stmt_Expr(self, node, rest):
        """Parses an ast.Expr statement."""
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a docstring
        value = self.eval(node.value)
        if isinstance(value, Spec):
            return self.spec_statement(value, node)
        if isinstance(value, PrimExpr):
            return _s.Evaluate(value)
        raise self.error(node, "unsupported expression statement; expected a T. call such as "
                               "T.evaluate, T.reads or T.func_attr")

    def spec_statement(self, spec, node):
        """A T. call used as a statement (T.evaluate, T.func_attr, T.reads...)."""
        frame = self.frames[-1]
        if spec.kind == "evaluate":
            return _s.Evaluate(_op.convert(spec.args[0]))
        if spec.kind == "func_attr":
            self.check_arity(spec.node, "T.func_attr", spec.args, 1)
            if not isinstance(spec.args[0], dict):
                raise self.error(spec.node, "T.func_attr expects a dict")
            self.attrs.update({k: _attr_value(v) for k, v in spec.args[0].items()})
            return None
        if spec.kind in _BLOCK_STATEMENTS:
            if frame.kind != "block":
                raise self.error(node, f"T.{spec.kind} is only allowed inside a T.block")
            block_statement(self, frame, spec)
            return None
        raise self.error(node, f"T.{spec.kind}(...) cannot be used as a statement here")

    def stmt_AnnAssign(self, node, rest):
        """Parses an ast.AnnAssign statement."""
        if node.value is None or not isinstance(node.target, ast.Name):
            raise self.error(node, "expected 'name: T.dtype = value'")
        ann = self.eval(node.annotation)
        if not (isinstance(ann, Builtin) and ann.name in DTYPES):
            raise self.error(node.annotation, "expected a dtype annotation such as T.int32")
        value = self.eval(node.value)
        var = self.let_var(node.target.id, ann.name)
        with self.scope():
            self.define(node.target.id, var)
            body = self.parse_body(rest, node)
        return _Rest(_s.LetStmt(var, _op.convert(value, ann.name), body))

    def stmt_Assign(self, node, rest):
        """Parses an ast.Assign statement."""
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self.buffer_store(target, node.value)
        value = self.eval(node.value)
        if isinstance(value, meta_var):  # a Python value standing for itself, no LetStmt
            names = self.target_names(target)
            values = [value.value] if len(names) == 1 else list(value.value)
            if len(values) != len(names):
                raise self.error(target, f"T.meta_var: {len(names)} names for "
                                         f"{len(values)} values")
            for name, item in zip(names, values):
                self.define(name, item)
            return None
        if isinstance(value, tuple) and value and all(isinstance(v, VarDecl) for v in value):
            for name, decl in zip(self.target_names(target, len(value)), value):
                self.define(name, decl.make(name))
            return None
        if isinstance(value, VarDecl):
            name = self.target_names(target, 1)[0]
            self.define(name, value.make(name))
            return None
        if isinstance(value, Spec):
            return self.spec_assign(target, value, node, rest)
        if isinstance(value, PrimExpr):
            name = self.target_names(target, 1)[0]
            var = self.let_var(name, value.dtype)
            with self.scope():
                self.define(name, var)
                body = self.parse_body(rest, node)
            return _Rest(_s.LetStmt(var, value, body))
        if isinstance(value, (int, float, bool, str, tuple)):
            for name in self.target_names(target, 1):
                self.define(name, value)
            return None
        raise self.error(node.value, "unsupported assigned value; expected a TIR expression, "
                                     "a buffer declaration or T.axis.*")

    def spec_assign(self, target, spec, node, rest):
        """``name = T.xxx(...)``: axes, buffer declarations, allocations."""
        frame = self.frames[-1]
        if spec.kind in AXIS_KINDS or spec.kind == "axis.remap":
            if frame.kind != "block":
                raise self.error(node, f"T.{spec.kind} is only allowed inside a T.block")
            block_axes(self, frame, target, spec)
            return None
        name = self.target_names(target, 1)[0]
        if spec.kind == "alloc_buffer":
            buf = self.make_buffer(spec, name)
            frame.alloc_buffers.append(buf)
            self.define(name, buf)
            return None
        if spec.kind == "match_buffer":
            return self.match_buffer(frame, name, spec)
        if spec.kind == "Buffer":  # a view of existing memory (data=), no statement of its own
            self.define(name, self.make_buffer(spec, name))
            return None
        if spec.kind == "decl_buffer":
            return _Rest(self.decl_buffer(node, name, spec, rest))
        if spec.kind == "allocate":
            return _Rest(self.allocate(node, name, spec, rest))
        raise self.error(node.value, f"T.{spec.kind}(...) cannot be assigned to a name")

    def decl_buffer(self, node, name, spec, stmts):
        """``X = T.decl_buffer(...)`` over the statements ``stmts`` (the ones after it, or the
        body of ``with T.decl_buffer(...) as X:``)."""
        buf = self.make_buffer(spec, name)
        with self.scope():
            self.define(name, buf)
            body = self.parse_body(stmts, node)
        return _s.DeclBuffer(buf, body)

    def allocate(self, node, name, spec, stmts):
        """``ptr = T.allocate([extents], dtype, scope, condition=, annotations=)`` over the
        statements ``stmts`` (the ones after it, or the body of ``with ... as ptr:``)."""
        self.check_arity(spec.node, "T.allocate", spec.args, 2, 3)
        unknown = set(spec.kwargs) - {"condition", "annotations"}
        if unknown:
            raise self.error(spec.node, f"T.allocate: unexpected argument(s) {sorted(unknown)}; "
                                        "expected condition= or annotations=")
        annotations = dict(spec.kwargs.get("annotations") or {})
        if len(spec.args) == 3:
            annotations["scope"] = spec.args[2]
        var = _e.Var(name, "handle")
        with self.scope():
            self.define(name, var)
            body = self.parse_body(stmts, node)
        return _s.Allocate(var, spec.args[1], spec.args[0], spec.kwargs.get("condition", True),
                           body, annotations)

    def match_buffer(self, frame, name, spec):
        """``X = T.match_buffer(...)``: of a parameter, or of a region inside a block."""
        if not spec.args:
            raise self.error(spec.node, "T.match_buffer expects a parameter and a shape")
        source = spec.args[0]
        buf = self.make_buffer(spec, name)
        if frame.kind == "block":
            if isinstance(source, _e.BufferLoad):
                source = _s.BufferRegion.from_point(source.buffer, source.indices)
            if not isinstance(source, _s.BufferRegion):
                raise self.error(spec.node, "T.match_buffer in a block expects a buffer region "
                                            "such as A[0:4, vi]")
            frame.match_buffers.append(_s.MatchBufferRegion(buf, source))
        else:
            if not (isinstance(source, _e.Var) and any(source is p for p in self.params)
                    and source.dtype == "handle"):
                raise self.error(spec.node.args[0], "T.match_buffer expects a T.handle "
                                                    "parameter of the function")
            if source in self.buffer_map:
                raise self.error(spec.node, f"parameter '{source.name_hint}' is already "
                                            "matched to a buffer")
            self.buffer_map[source] = buf
        self.define(name, buf)
        return None

    def buffer_store(self, target, value_node):
        """``A[i, j] = value``."""
        buf = self.eval(target.value)
        if not isinstance(buf, Buffer):
            raise self.error(target.value, f"cannot store into {type(buf).__name__}; expected "
                                           "a buffer")
        indices = index_nodes(target)
        values = [self.eval(i) for i in indices]
        if len(values) != len(buf.shape):
            raise self.error(target, f"buffer '{buf.name}' has {len(buf.shape)} dimension(s), "
                                     f"got {len(values)} index(es)")
        value = self.eval(value_node)
        try:
            return buf.vstore(values, value)
        except (TypeError, ValueError) as err:
            raise self.error(value_node, str(err)) from None

    def stmt_AugAssign(self, node, rest):
        """``A[i] += value``: a store of ``A[i] + value`` (also -=, *=, /=, //=, %=)."""
        if not isinstance(node.target, ast.Subscript):
            raise self.error(node.target, "augmented assignment needs a buffer element on the "
                                          "left, such as A[i] += value; TIR variables are "
                                          "immutable")
        load = self.eval(node.target)
        combined = ast.BinOp(left=node.target, op=node.op, right=node.value)
        ast.copy_location(combined, node)
        value = self.ir_binop(combined, type(node.op), load, self.eval(node.value))
        buf = load.buffer
        try:
            return buf.vstore(list(load.indices), value)
        except (TypeError, ValueError) as err:
            raise self.error(node, str(err)) from None

    def stmt_If(self, node, rest):
        """Parses an ast.If statement."""
        cond = self.eval(node.test)
        with self.scope():
            then_case = self.parse_body(node.body, node)
        else_case = None
        if node.orelse:
            with self.scope():
                else_case = self.parse_body(node.orelse, node)
        return _s.IfThenElse(_op.convert(cond), then_case, else_case)

    def stmt_While(self, node, rest):
        """Parses an ast.While statement."""
        if node.orelse:
            raise self.error(node, "while/else is not supported")
        cond = self.eval(node.test)
        with self.scope():
            body = self.parse_body(node.body, node)
        return _s.While(cond, body)

    def stmt_Assert(self, node, rest):
        """Parses an ast.Assert statement."""
        cond = self.eval(node.test)
        message = self.eval(node.msg) if node.msg is not None else "assertion failed"
        body = self.parse_body(rest, node)
        return _Rest(_s.AssertStmt(cond, message, body))

    def stmt_For(self, node, rest):
        """Parses an ast.For statement."""
        return parse_for(self, node)

    def stmt_With(self, node, rest):
        """Parses an ast.With statement."""
        return parse_with(self, node)


def _take(args, kwargs, key, default):
    """The next argument: ``key=`` when given, else the next positional one, else ``default``."""
    if key in kwargs:
        return kwargs.pop(key)
    return args.pop(0) if args else default


class _Rest:
    """A statement that consumed the rest of its sequence as its body."""

    def __init__(self, stmt):
        self.stmt = stmt


def index_nodes(subscript):
    """The ast nodes of ``A[i, j]``'s indices."""
    if isinstance(subscript.slice, ast.Tuple):
        return list(subscript.slice.elts)
    return [subscript.slice]


def buffer_access(parser, buf, node):
    """``A[i, j]`` (a BufferLoad) or ``A[0:4, j]`` (a BufferRegion)."""
    nodes = index_nodes(node)
    if len(nodes) != len(buf.shape):
        raise parser.error(node, f"buffer '{buf.name}' has {len(buf.shape)} dimension(s), "
                                 f"got {len(nodes)} index(es)")
    if not any(isinstance(n, ast.Slice) for n in nodes):
        return buf[tuple(parser.eval(n) for n in nodes)]
    region = []
    for n, dim in zip(nodes, buf.shape):
        if isinstance(n, ast.Slice):
            if n.step is not None:
                raise parser.error(n, "buffer regions need unit steps; expected start:stop")
            if n.upper is None:
                start = parser.eval(n.lower) if n.lower is not None else 0
                lo, extent = start, _op.subtract(dim, start)
            else:
                lo, extent = bounds(parser, n.lower, n.upper)
            lo = _op.convert(lo, dim.dtype)
            region.append(_e.Range.from_min_extent(lo, _op.convert(extent, lo.dtype)))
        else:
            index = _op.convert(parser.eval(n), dim.dtype)
            region.append(_e.Range.from_min_extent(index, _op.const(1, index.dtype)))
    return _s.BufferRegion(buf, region)


def _attr_value(value):
    """A function attribute as stored: TVM's printer writes flags as ``T.bool(True)``."""
    if isinstance(value, _e.IntImm) and value.dtype == "bool":
        return bool(value.value)
    return value
