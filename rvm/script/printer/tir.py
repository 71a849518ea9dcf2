"""PrimFuncs and TIR statements as script text (``@T.prim_func``, ``T.grid``, ``T.block``)."""
from rvm.ir.expr import PrimExpr
from rvm.ir.base import structural_equal
from rvm.tir import expr as _e
from rvm.tir import stmt as _s
from rvm.tir.free_vars import used_vars
from rvm.tir.buffer import Buffer
from rvm.tir.stmt_functor import post_order_visit
from rvm.script.printer.names import NameTable
from rvm.script.printer.tir_expr import ExprPrinter
from rvm.tir.expr_printer import quote

INDENT = "    "
_AXIS_KIND = {_e.IterVar.DataPar: ("spatial", "S"), _e.IterVar.CommReduce: ("reduce", "R"),
              _e.IterVar.Ordered: ("scan", None), _e.IterVar.Opaque: ("opaque", None)}
_LOOP_KIND = {kind: name for name, kind in _s.FOR_KIND_NAMES.items()}


# Statements printed as a line followed by their body at the same depth.
_BINDERS = (_s.Allocate, _s.DeclBuffer, _s.LetStmt, _s.AssertStmt)


def is_const(x, value):
    """Whether ``x`` is the integer constant ``value``."""
    return isinstance(x, _e.IntImm) and x.value == value


def value_text(value, expr, leaf=None, tir_bools=True):
    """Attribute values (Python literals, PrimExprs, nested lists and dicts) as script text;
    ``leaf(value)`` gives the text of other values (arrays as ``metadata[...]``). As TVM
    prints them, dicts with str keys list their keys sorted, and bools of TIR attributes
    print ``T.bool(True)`` (TIR keeps them as boolean constants); ``tir_bools=False`` prints
    them ``True`` (Relax attributes)."""
    def text(v):
        return value_text(v, expr, leaf, tir_bools)

    if isinstance(value, bool):
        return f"T.bool({value})" if tir_bools else repr(value)
    if value is None or isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, PrimExpr):
        return expr(value)
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        entries = list(value.items())
        if all(isinstance(k, str) for k, _ in entries):
            entries.sort(key=lambda kv: kv[0])
        return "{" + ", ".join(f"{text(k)}: {text(v)}" for k, v in entries) + "}"
    text_ = leaf(value) if leaf is not None else None
    if text_ is None:
        raise TypeError(f"cannot print attribute value of type {type(value).__name__}")
    return text_


def shape_text(dims, expr):
    """A buffer shape tuple; constants of the shape's index dtype print as plain ints."""
    symbolic = [d for d in dims if not isinstance(d, _e.IntImm)]
    index_dtype = "int64" if any(d.dtype == "int64" for d in symbolic) else "int32"
    parts = [str(d.value) if isinstance(d, _e.IntImm) and d.dtype == index_dtype
             else f"T.int32({d.value})" if isinstance(d, _e.IntImm) and d.dtype == "int32"
             else expr(d) for d in dims]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def is_simple_buffer(buf):
    """Whether a parameter buffer can be written as a ``T.Buffer(...)`` annotation."""
    return (not buf.strides and is_const(buf.elem_offset, 0) and buf.scope == "global"
            and all(isinstance(d, _e.IntImm) for d in buf.shape))


def is_root_realize(body):
    """Whether ``body`` is the implicit root block that the script shows as a comment."""
    if not isinstance(body, _s.BlockRealize):
        return False
    block = body.block
    return (block.name_hint == "root" and not block.iter_vars and not body.iter_values
            and is_const(body.predicate, 1) and not block.reads and not block.writes
            and block.init is None and not block.annotations and not block.match_buffers)


class TIRPrinter:
    """Prints statements into ``lines`` with the names of ``names``."""

    def __init__(self, names):
        self.names = names
        self.root = names
        self.let_names = {}  # id(var) -> name of each LetStmt variable printed so far
        self.lines = []
        self.loops = {}
        self.free_vars = []
        self.expr = ExprPrinter(names, on_free_var=self._free_var)

    def _free_var(self, var):
        self.free_vars.append(var)
        name = self.root.define(var, var.name_hint)
        self.names.used.add(name)
        return name

    def let_name(self, var):
        """The name of a LetStmt's variable: unique in the function (reserved in every
        enclosing scope), and the same each time one variable is bound again, so the parser
        reads a name bound again after its first binding's scope as the same variable."""
        name = self.let_names.get(id(var))
        if name is not None:
            self.names.names[id(var)] = name
            return name
        name = self.names.define(var, var.name_hint)
        table = self.names.parent
        while table is not None:
            table.used.add(name)
            table = table.parent
        self.let_names[id(var)] = name
        return name

    def emit(self, depth, text):
        """Appends a line at indentation ``depth``."""
        self.lines.append(INDENT * depth + text)

    def define(self, obj, hint):
        """Names ``obj`` in the innermost scope; a buffer's data pointer, unless already named
        (an allocation's), becomes ``<buffer>.data``."""
        name = self.names.define(obj, hint)
        if isinstance(obj, Buffer) and not self.names.has(obj.data):
            self.names.alias(obj.data, f"{name}.data")
        return name

    # -- buffers -------------------------------------------------------------------------
    def buffer_args(self, buf, force_dtype=False):
        """``(1, n), "float16", scope="shared"``: the arguments after a buffer's shape."""
        args = [shape_text(buf.shape, self.expr)]
        if force_dtype or buf.dtype != "float32":
            args.append(quote(buf.dtype))
        if buf.strides:
            args.append(f"strides={shape_text(buf.strides, self.expr)}")
        if not is_const(buf.elem_offset, 0):
            args.append(f"elem_offset={self.expr(buf.elem_offset)}")
        if buf.scope != "global":
            args.append(f"scope={quote(buf.scope)}")
        return ", ".join(args)

    def declare_shape_vars(self, buf, depth):
        """``n = T.int64()`` lines for the variables a buffer's shape introduces, those inside
        a dimension such as ``n * m`` included (the buffer's line uses them)."""
        dims = list(buf.shape) + list(buf.strides) + [buf.elem_offset]
        for var in used_vars(dims).values():
            if var.dtype != "handle" and not self.names.has(var):
                self.emit(depth, f"{self.define(var, var.name_hint)} = {var_decl(var)}")

    def region(self, region):
        """A buffer region: ``A[vi, 0:4]``."""
        parts = []
        for rng in region.region:
            if is_const(rng.extent, 1):
                parts.append(self.expr(rng.min))
            elif is_const(rng.min, 0):
                parts.append(f"0:{self.expr(rng.extent)}")
            else:
                parts.append(f"{self.expr(rng.min)}:{self.expr.range_end(rng.min, rng.extent)}")
        return f"{self.expr.buffer_name(region.buffer)}[{', '.join(parts) or '()'}]"

    # -- statements ----------------------------------------------------------------------
    def stmt(self, node, depth):
        """Prints a statement at ``depth``."""
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise TypeError(f"the script printer cannot print {type(node).__name__} statements")
        method(node, depth)

    def _SeqStmt(self, node, depth):
        for k, item in enumerate(node.seq):
            if k == len(node.seq) - 1 or not isinstance(item, _BINDERS):
                self.stmt(item, depth)
                continue
            # Not last: "x = T.allocate(...)" would take in the statements after it.
            if isinstance(item, _s.AssertStmt):
                head = f"T.Assert({self.expr(item.condition)}, {self.expr(item.message)})"
            elif isinstance(item, _s.LetStmt):
                value = self.expr(item.value)
                head = f"T.LetStmt({value}) as {self.let_name(item.var)}"
            else:
                name, call = self._binder(item)
                head = f"{call} as {name}"
            self.emit(depth, f"with {head}:")
            self.stmt(item.body, depth + 1)

    def _BufferStore(self, node, depth):
        indices = self.expr.indices(node.indices, node.buffer)
        target = f"{self.expr.buffer_name(node.buffer)}[{indices}]"
        self.emit(depth, f"{target} = {self.expr(node.value)}")

    def _Evaluate(self, node, depth):
        if isinstance(node.value, _e.Call):
            self.emit(depth, self.expr(node.value))
        else:
            self.emit(depth, f"T.evaluate({self.expr(node.value)})")

    def _IfThenElse(self, node, depth):
        self.emit(depth, f"if {self.expr(node.condition)}:")
        self.stmt(node.then_case, depth + 1)
        if node.else_case is not None:
            self.emit(depth, "else:")
            self.stmt(node.else_case, depth + 1)

    def _While(self, node, depth):
        self.emit(depth, f"while {self.expr(node.condition)}:")
        self.stmt(node.body, depth + 1)

    def _AssertStmt(self, node, depth):
        self.emit(depth, f"assert {self.expr(node.condition)}, {self.expr(node.message)}")
        self.stmt(node.body, depth)

    def _LetStmt(self, node, depth):
        value = self.expr(node.value)
        name = self.let_name(node.var)
        self.emit(depth, f"{name}: T.{node.var.dtype} = {value}")
        self.stmt(node.body, depth)

    def _Allocate(self, node, depth):
        name, call = self._binder(node)
        self.emit(depth, f"{name} = {call}")
        self.stmt(node.body, depth)

    def _DeclBuffer(self, node, depth):
        name, call = self._binder(node)
        self.emit(depth, f"{name} = {call}")
        self.stmt(node.body, depth)

    def _binder(self, node):
        """(name, ``T.allocate(...)``/``T.decl_buffer(...)``) of an Allocate or DeclBuffer."""
        if isinstance(node, _s.DeclBuffer):
            buf = node.buffer
            args = self.buffer_args(buf, force_dtype=True)
            data = self.expr(buf.data)
            return self.define(buf, buf.name), f"T.decl_buffer({args}, data={data})"
        args = [f"[{', '.join(self.expr(e) for e in node.extents)}]", quote(node.dtype)]
        annotations = dict(node.annotations)
        if "scope" in annotations:
            args.append(quote(annotations.pop("scope")))
        if not is_const(node.condition, 1):
            args.append(f"condition={self.expr(node.condition)}")
        if annotations:
            args.append(f"annotations={value_text(annotations, self.expr)}")
        name = self.define(node.buffer_var, node.buffer_var.name_hint)
        return name, f"T.allocate({', '.join(args)})"

    def _grid_chain(self, node):
        chain = [node]
        var_ids = set()
        while True:
            var_ids.add(id(chain[-1].loop_var))
            body = chain[-1].body
            if not (isinstance(body, _s.For) and self._plain(body)) or \
                    used_vars(body.extent).keys() & var_ids:
                return chain
            chain.append(body)

    @staticmethod
    def _plain(loop):
        return (loop.kind == _s.ForKind.SERIAL and is_const(loop.min, 0) and not loop.annotations
                and loop.thread_binding is None)

    def _For(self, node, depth):
        outer = self.names
        self.names = self.expr.names = outer.child()
        try:
            if self._plain(node):
                chain = self._grid_chain(node)
                extents = [self.expr(loop.extent) for loop in chain]
                names = [self.define(loop.loop_var, loop.loop_var.name_hint) for loop in chain]
                if len(chain) == 1:
                    self.emit(depth, f"for {names[0]} in range({extents[0]}):")
                else:
                    self.emit(depth, f"for {', '.join(names)} in T.grid({', '.join(extents)}):")
            else:
                chain = [node]
                self.emit(depth, f"for {self._loop_head(node)}:")
            for loop in chain:
                self.loops[id(loop.loop_var)] = loop
            self.stmt(chain[-1].body, depth + 1)
        finally:
            self.names = self.expr.names = outer

    def _loop_head(self, node):
        args = [self.expr(node.extent)] if is_const(node.min, 0) else [
            self.expr(node.min), self.expr.range_end(node.min, node.extent)]
        if node.thread_binding is not None:
            tag = getattr(node.thread_binding, "thread_tag", node.thread_binding)
            args.append(f"thread={quote(tag)}")
        if node.annotations:
            args.append(f"annotations={value_text(node.annotations, self.expr)}")
        name = self.define(node.loop_var, node.loop_var.name_hint)
        return f"{name} in T.{_LOOP_KIND[node.kind]}({', '.join(args)})"

    # -- blocks --------------------------------------------------------------------------
    def _remappable(self, iv, value):
        loop = self.loops.get(id(value)) if isinstance(value, _e.Var) else None
        return (loop is not None and _AXIS_KIND[iv.iter_type][1] is not None
                and is_const(loop.min, 0) and is_const(iv.dom.min, 0)
                and structural_equal(iv.dom.extent, loop.extent, map_free_vars=False)
                and iv.var.dtype == value.dtype)

    def _axes(self, realize, depth):
        """The block's axes: as TVM prints them, a run of two or more axes bound to the
        enclosing loops as ``T.axis.remap``, every other axis on a line of its own."""
        pairs = list(zip(realize.block.iter_vars, realize.iter_values))
        k = 0
        while k < len(pairs):
            run = []
            seen = set()
            while k < len(pairs) and self._remappable(*pairs[k]) and id(pairs[k][1]) not in seen:
                run.append(pairs[k])
                seen.add(id(pairs[k][1]))
                k += 1
            if len(run) > 1:
                values = ", ".join(self.expr(v) for _, v in run)
                kinds = "".join(_AXIS_KIND[iv.iter_type][1] for iv, _ in run)
                names = ", ".join(self.define(iv.var, iv.var.name_hint) for iv, _ in run)
                self.emit(depth, f'{names} = T.axis.remap("{kinds}", [{values}])')
                continue
            if not run:
                run.append(pairs[k])
                k += 1
            iv, value = run[0]
            dom = self.expr(iv.dom.extent) if is_const(iv.dom.min, 0) else \
                f"({self.expr(iv.dom.min)}, {self.expr.range_end(iv.dom.min, iv.dom.extent)})"
            value_text_ = self.expr(value)
            name = self.define(iv.var, iv.var.name_hint)
            self.emit(depth, f"{name} = T.axis.{_AXIS_KIND[iv.iter_type][0]}({dom}, {value_text_})")

    def _BlockRealize(self, node, depth):
        block = node.block
        outer = self.names
        self.names = self.expr.names = outer.child()
        try:
            self.emit(depth, f"with T.block({quote(block.name_hint)}):")
            inner = depth + 1
            self._axes(node, inner)
            if not is_const(node.predicate, 1):
                self.emit(inner, f"T.where({self.expr(node.predicate)})")
            self.emit(inner, f"T.reads({', '.join(self.region(r) for r in block.reads)})")
            self.emit(inner, f"T.writes({', '.join(self.region(r) for r in block.writes)})")
            if block.annotations:
                self.emit(inner, f"T.block_attr({value_text(block.annotations, self.expr)})")
            self.alloc_buffers(block.alloc_buffers, inner)
            for match in block.match_buffers:
                buf = match.buffer
                self.declare_shape_vars(buf, inner)
                source = self.region(match.source)
                args = self.buffer_args(buf)
                self.emit(inner, f"{self.define(buf, buf.name)} = T.match_buffer({source}, {args})")
            if block.init is not None:
                self.emit(inner, "with T.init():")
                self.stmt(block.init, inner + 1)
            self.stmt(block.body, inner)
        finally:
            self.names = self.expr.names = outer

    def alloc_buffers(self, buffers, depth):
        """Prints ``X = T.alloc_buffer(...)`` lines."""
        for buf in buffers:
            self.declare_shape_vars(buf, depth)
            args = self.buffer_args(buf)
            self.emit(depth, f"{self.define(buf, buf.name)} = T.alloc_buffer({args})")


def undeclared_buffers(func):
    """(buffers the body of ``func`` accesses but nothing declares (the flat views of parameter
    buffers that FlattenBuffer makes) in order of first use, ids of all accessed buffers)."""
    declared = {id(b) for b in func.buffer_map.values()}
    used = []

    def visit(node):
        """Records declarations and uses of buffers."""
        if isinstance(node, _s.DeclBuffer):
            declared.add(id(node.buffer))
        elif isinstance(node, _s.Block):
            declared.update(id(b) for b in node.alloc_buffers)
            declared.update(id(m.buffer) for m in node.match_buffers)
        elif isinstance(node, (_e.BufferLoad, _s.BufferStore)):
            used.append(node.buffer)
        elif isinstance(node, _e.Call):  # a buffer passed whole (T.call_packed("f", A))
            used.extend(a for a in node.args if isinstance(a, Buffer))

    post_order_visit(func.body, visit)
    out = {}
    for buf in used:
        if id(buf) not in declared:
            out.setdefault(id(buf), buf)
    return list(out.values()), {id(buf) for buf in used}


def var_decl(var):
    """``T.int64()``: the declaration of a symbolic variable."""
    size = ", is_size_var=True" if isinstance(var, _e.SizeVar) else ""
    return f"T.{var.dtype}({size.lstrip(', ')})"


def decorator(kind, func, name):
    """``@T.prim_func`` / ``@R.function(private=True)`` and the attrs left to print."""
    attrs = dict(func.attrs or {})
    symbol = attrs.pop("global_symbol", None)
    options = []
    if symbol is None:
        options.append("private=True")
    elif symbol != name:
        attrs["global_symbol"] = symbol
    if kind == "R.function" and not func.is_pure:
        options.append("pure=False")
    return f"@{kind}({', '.join(options)})" if options else f"@{kind}", attrs


def print_prim_func(func, name, depth=0, names=None):
    """The lines of ``@T.prim_func def name(...)``."""
    names = names if names is not None else NameTable()
    printer = TIRPrinter(names)
    head, attrs = decorator("T.prim_func", func, name)
    params = []
    deferred = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None and is_simple_buffer(buf):
            pname = printer.define(buf, buf.name)
            names.names[id(p)] = pname
            params.append(f"{pname}: T.Buffer({printer.buffer_args(buf, force_dtype=True)})")
        else:
            pname = printer.define(p, p.name_hint)
            params.append(f"{pname}: T.{p.dtype}" if p.dtype != "handle" or buf is None
                          else f"{pname}: T.handle")
            if buf is not None:
                deferred.append((pname, buf))
    body_depth = depth + 1
    header = [INDENT * depth + head, INDENT * depth + f"def {name}({', '.join(params)}):"]
    if attrs:
        printer.emit(body_depth, f"T.func_attr({value_text(attrs, printer.expr)})")
    for pname, buf in deferred:
        printer.declare_shape_vars(buf, body_depth)
        args = printer.buffer_args(buf)
        name = printer.define(buf, buf.name)
        printer.emit(body_depth, f"{name} = T.match_buffer({pname}, {args})")
    views, accessed = undeclared_buffers(func)
    owners = {id(b.data): b for b in func.buffer_map.values() if id(b) not in accessed}
    for buf in views:
        if names.has(buf.data):  # a view of a parameter's memory: T.Buffer(..., data=A.data)
            printer.declare_shape_vars(buf, body_depth)
            args = printer.buffer_args(buf, force_dtype=True)
            data = printer.expr(buf.data)
            owner = owners.pop(id(buf.data), None)
            if owner is not None and names.get(owner) == buf.name:
                # The body only reads the view (a flattened parameter): it keeps the name.
                names.alias(buf, buf.name)
                view = buf.name
            else:
                view = printer.define(buf, buf.name)
            printer.emit(body_depth, f"{view} = T.Buffer({args}, data={data})")
    prologue = len(printer.lines)
    body = func.body
    if is_root_realize(body):
        printer.emit(body_depth, '# with T.block("root"):')
        printer.alloc_buffers(body.block.alloc_buffers, body_depth)
        body = body.block.body
    printer.stmt(body, body_depth)
    decls = [INDENT * body_depth + f"{names.get(v)} = {var_decl(v)}" for v in printer.free_vars]
    return header + printer.lines[:prologue] + decls + printer.lines[prologue:]


def print_stmt(node):
    """A statement (or a sequence of them) as script lines."""
    printer = TIRPrinter(NameTable())
    printer.stmt(node, 0)
    decls = [f"{printer.names.get(v)} = {var_decl(v)}" for v in printer.free_vars]
    return decls + printer.lines


def print_buffer(buf):
    """``T.Buffer((128, 128), "float32")`` for a buffer outside any function."""
    printer = TIRPrinter(NameTable())
    return f"T.Buffer({printer.buffer_args(buf, force_dtype=True)})"
