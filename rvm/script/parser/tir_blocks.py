"""Loops and blocks in prim_funcs: ``for ... in T.grid(...)``, ``with T.block(...)``, axes."""
import ast

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType
from rvm.tir import expr as _e
from rvm.tir import op as _op
from rvm.tir import stmt as _s
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.buffer import Buffer
from rvm.script.parser.tir_builtins import Spec

AXIS_KINDS = {"axis.spatial": _e.IterVar.DataPar, "axis.reduce": _e.IterVar.CommReduce,
              "axis.scan": _e.IterVar.Ordered, "axis.opaque": _e.IterVar.Opaque,
              "axis.S": _e.IterVar.DataPar, "axis.R": _e.IterVar.CommReduce}
REMAP_KINDS = {"S": _e.IterVar.DataPar, "R": _e.IterVar.CommReduce}


class Frame:
    """What a function or block body declares besides its statements."""

    def __init__(self, kind, name=""):
        self.kind = kind
        self.name = name
        self.alloc_buffers = []
        self.match_buffers = []
        self.iter_vars = []
        self.iter_values = []
        self.reads = None
        self.writes = None
        self.predicate = None
        self.annotations = {}
        self.init = None


def bounds(parser, start_node, stop_node):
    """(min, extent) of a half-open range written ``start, stop``; ``stop`` of the form
    ``start + e`` gives the extent ``e`` exactly (the printer writes ranges that way)."""
    start = parser.eval(start_node) if start_node is not None else 0
    if isinstance(stop_node, ast.BinOp) and isinstance(stop_node.op, ast.Add) and \
            start_node is not None and ast.dump(stop_node.left) == ast.dump(start_node):
        return start, parser.eval(stop_node.right)
    stop = parser.eval(stop_node)
    if isinstance(start, PrimExpr) or isinstance(stop, PrimExpr):
        return start, _op.subtract(stop, start)
    return start, stop - start


def _dtype_of(*values):
    for v in values:
        if isinstance(v, PrimExpr):
            return v.dtype
    return DataType("int32")


def _check_int(parser, node, value, what):
    if isinstance(value, bool) or not isinstance(value, (int, PrimExpr)) or (
            isinstance(value, PrimExpr) and not (value.dtype.is_int or value.dtype.is_uint)):
        raise parser.error(node, f"{what} must be an integer or integer expression, "
                                 f"got {value!r}")


def _loop_spec(parser, node):
    it = node.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
            and not parser.lookup_local("range")[0]:
        if it.keywords:
            raise parser.error(it, "range() takes no keyword arguments")
        return Spec("serial", it, tuple(parser.eval(a) for a in it.args), {})
    spec = parser.eval(it)
    if not isinstance(spec, Spec) or spec.kind not in ("grid",) + tuple(_s.FOR_KIND_NAMES):
        raise parser.error(it, "unsupported loop; expected range(...), T.grid(...), or "
                               "T.serial/T.parallel/T.vectorized/T.unroll(...)")
    return spec


def parse_for(parser, node):
    """The For nest of a ``for`` statement."""
    if node.orelse:
        raise parser.error(node, "for/else is not supported")
    spec = _loop_spec(parser, node)
    loops = []  # (name, min, extent, kind, kwargs)
    if spec.kind == "grid":
        if not spec.args or spec.kwargs:
            raise parser.error(spec.node, "T.grid expects one or more extents")
        names = parser.target_names(node.target, len(spec.args))
        for name, extent, arg in zip(names, spec.args, spec.node.args):
            _check_int(parser, arg, extent, "a loop extent")
            loops.append((name, 0, extent, _s.ForKind.SERIAL, {}))
    else:
        args, arg_nodes, spec_kwargs = spec.args, spec.node.args, dict(spec.kwargs)
        if (spec.kind == "thread_binding" and len(args) in (2, 3) and isinstance(args[-1], str)
                and "thread" not in spec_kwargs):  # T.thread_binding(extent, "threadIdx.x")
            args, arg_nodes, spec_kwargs["thread"] = args[:-1], arg_nodes[:-1], args[-1]
        parser.check_arity(spec.node, f"T.{spec.kind}", args, 1, 2)
        name = parser.target_names(node.target, 1)[0]
        if len(args) == 1:
            lo, extent = 0, args[0]
        else:
            lo, extent = bounds(parser, arg_nodes[0], arg_nodes[1])
        _check_int(parser, spec.node, extent, "a loop extent")
        _check_int(parser, spec.node, lo, "a loop start")
        kwargs = spec_kwargs
        extra = set(kwargs) - {"annotations", "thread"}
        if extra:
            raise parser.error(spec.node, f"T.{spec.kind}: unexpected argument(s) "
                                          f"{sorted(extra)}; expected annotations= or thread=")
        loops.append((name, lo, extent, _s.FOR_KIND_NAMES[spec.kind], kwargs))
    with parser.scope():
        made = []
        for name, lo, extent, kind, kwargs in loops:
            var = _e.Var(name, _dtype_of(extent, lo))
            parser.define(name, var)
            lo_expr = _op.convert(lo, var.dtype)
            parser.loops[id(var)] = (var, lo_expr, _op.convert(extent, var.dtype))
            made.append((var, lo_expr, extent, kind, kwargs))
        body = parser.parse_body(node.body, node)
    for var, lo, extent, kind, kwargs in reversed(made):
        body = _s.For(var, lo, extent, kind, body, thread_binding=kwargs.get("thread"),
                      annotations=kwargs.get("annotations"))
    return body


def parse_with(parser, node):
    """``with T.block(name):`` (a BlockRealize), ``with T.init():`` inside a block, or a
    statement scoped to the body: ``with T.allocate(...) as ptr:``, ``with T.decl_buffer(...)
    as X:``, ``with T.LetStmt(value) as x:``, ``with T.Assert(cond, message):``."""
    item = node.items[0]
    if len(node.items) == 1 and isinstance(item.optional_vars, ast.Name):
        spec = parser.eval(item.context_expr)
        if isinstance(spec, Spec) and spec.kind in ("allocate", "decl_buffer"):
            scoped = parser.allocate if spec.kind == "allocate" else parser.decl_buffer
            return scoped(node, item.optional_vars.id, spec, node.body)
        if isinstance(spec, Spec) and spec.kind == "LetStmt":
            parser.check_arity(spec.node, "T.LetStmt", spec.args, 1)
            value = _op.convert(spec.args[0])
            var = parser.let_var(item.optional_vars.id, value.dtype)
            with parser.scope():
                parser.define(var.name_hint, var)
                return _s.LetStmt(var, value, parser.parse_body(node.body, node))
        raise parser.error(item.context_expr, "unsupported 'with ... as name'; expected "
                                              "T.allocate(...), T.decl_buffer(...) or "
                                              "T.LetStmt(value)")
    spec = parser.eval(item.context_expr) if len(node.items) == 1 else None
    if isinstance(spec, Spec) and spec.kind == "Assert" and item.optional_vars is None:
        parser.check_arity(spec.node, "T.Assert", spec.args, 2)
        with parser.scope():
            body = parser.parse_body(node.body, node)
        return _s.AssertStmt(spec.args[0], spec.args[1], body)
    if len(node.items) != 1 or node.items[0].optional_vars is not None:
        raise parser.error(node, "expected 'with T.block(\"name\"):', 'with T.init():' or "
                                 "'with T.allocate(...) as name:'")
    if not isinstance(spec, Spec) or spec.kind not in ("block", "init"):
        raise parser.error(node.items[0].context_expr, "unsupported 'with'; expected "
                                                       "T.block(\"name\"), T.init() or "
                                                       "T.Assert(cond, message)")
    if spec.kind == "init":
        frame = parser.frames[-1]
        if frame.kind != "block":
            raise parser.error(node, "T.init() is only allowed inside a T.block")
        if frame.init is not None:
            raise parser.error(node, f"block '{frame.name}' already has a T.init()")
        with parser.scope():
            frame.init = parser.parse_body(node.body, node)
        return None
    kwargs = dict(spec.kwargs)
    unknown = set(kwargs) - {"name_hint", "no_realize"}
    if unknown:
        raise parser.error(spec.node, f"T.block: unexpected argument(s) {sorted(unknown)}; "
                                      "expected the name, name_hint= or no_realize=")
    if len(spec.args) > 1 or spec.args and "name_hint" in kwargs:
        raise parser.error(spec.node, "T.block takes one name")
    name = spec.args[0] if spec.args else kwargs.get("name_hint", "")
    if not isinstance(name, str):
        raise parser.error(spec.node, f"T.block expects the block name, a str, got {name!r}")
    return parse_block(parser, node, name, kwargs.get("no_realize", False))


def parse_block(parser, node, name, no_realize=False):
    """The BlockRealize of ``with T.block(name):``."""
    frame = Frame("block", name)
    parser.frames.append(frame)
    try:
        with parser.scope():
            body = parser.parse_body(node.body, node)
    finally:
        parser.frames.pop()
    block = _s.Block(frame.iter_vars, frame.reads or (), frame.writes or (), name, body,
                     init=frame.init, alloc_buffers=frame.alloc_buffers,
                     match_buffers=frame.match_buffers, annotations=frame.annotations)
    if frame.reads is None or frame.writes is None:
        reads, writes = get_block_read_write_region(block)
        block = block.with_fields(reads=tuple(reads) if frame.reads is None else block.reads,
                                  writes=tuple(writes) if frame.writes is None else block.writes)
    predicate = True if frame.predicate is None else frame.predicate
    block.span = parser.span(node)
    return _s.BlockRealize(frame.iter_values, predicate, block, span=parser.span(node))


def _regions(parser, spec):
    out = []
    items = list(spec.args)
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        items = list(items[0])
    for item in items:
        if isinstance(item, _e.BufferLoad):
            item = _s.BufferRegion.from_point(item.buffer, item.indices)
        elif isinstance(item, Buffer):
            item = _s.BufferRegion.full_region(item)
        if not isinstance(item, _s.BufferRegion):
            raise parser.error(spec.node, f"T.{spec.kind} expects buffer regions such as "
                                          f"A[vi, 0:4], got {type(item).__name__}")
        out.append(item)
    return tuple(out)


def block_statement(parser, frame, spec):
    """T.reads / T.writes / T.where / T.block_attr inside a block."""
    if spec.kind in ("reads", "writes"):
        if getattr(frame, spec.kind) is not None:
            raise parser.error(spec.node, f"block '{frame.name}' already has T.{spec.kind}")
        setattr(frame, spec.kind, _regions(parser, spec))
    elif spec.kind == "where":
        parser.check_arity(spec.node, "T.where", spec.args, 1)
        frame.predicate = _op.convert(spec.args[0])
    else:
        parser.check_arity(spec.node, "T.block_attr", spec.args, 1)
        if not isinstance(spec.args[0], dict):
            raise parser.error(spec.node, "T.block_attr expects a dict")
        frame.annotations.update(spec.args[0])


def block_axes(parser, frame, target, spec):
    """``vi = T.axis.spatial(dom, value)`` and ``vi, vj = T.axis.remap("SS", [i, j])``."""
    if spec.kind == "axis.remap":
        parser.check_arity(spec.node, "T.axis.remap", spec.args, 2)
        kinds, values = spec.args
        if not isinstance(kinds, str):
            raise parser.error(spec.node.args[0], "T.axis.remap expects a kind string such as "
                                                  "\"SSR\"")
        if not isinstance(values, (list, tuple)) or len(values) != len(kinds):
            raise parser.error(spec.node, f"T.axis.remap: {len(kinds)} kind(s) need as many "
                                          f"loop variables")
        names = parser.target_names(target, len(kinds))
        for k, (kind, value) in enumerate(zip(kinds, values)):
            if kind not in REMAP_KINDS:
                raise parser.error(spec.node.args[0], f"bad axis kind '{kind}' in T.axis.remap; "
                                                      "expected 'S' (spatial) or 'R' (reduce)")
            loop = parser.loops.get(id(value)) if isinstance(value, _e.Var) else None
            if loop is None:
                raise parser.error(spec.node.args[1], "T.axis.remap expects loop variables of "
                                                      "enclosing loops")
            var = _e.Var(names[k], value.dtype)
            dom = _e.Range.from_min_extent(loop[1], loop[2])
            _add_axis(parser, frame, names[k], _e.IterVar(dom, var, REMAP_KINDS[kind]), value)
        return
    parser.check_arity(spec.node, f"T.{spec.kind}", spec.args, 2)
    name = parser.target_names(target, 1)[0]
    dom, value = spec.args
    dom_node = spec.node.args[0]
    dtype = _dtype_of(value, dom)
    if isinstance(dom, tuple):
        if len(dom) != 2:
            raise parser.error(dom_node, "an axis domain is an extent or a (start, stop) pair")
        lo, extent = bounds(parser, dom_node.elts[0], dom_node.elts[1])
    else:
        lo, extent = 0, dom
    _check_int(parser, dom_node, extent, "an axis extent")
    rng = _e.Range.from_min_extent(_op.convert(lo, dtype), _op.convert(extent, dtype))
    var = _e.Var(name, dtype)
    _add_axis(parser, frame, name, _e.IterVar(rng, var, AXIS_KINDS[spec.kind]),
              _op.convert(value, dtype))


def _add_axis(parser, frame, name, iter_var, value):
    frame.iter_vars.append(iter_var)
    frame.iter_values.append(value)
    parser.define(name, iter_var.var)
