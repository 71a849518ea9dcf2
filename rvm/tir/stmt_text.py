"""A plain text form of TIR statements and PrimFuncs in script-like syntax.

Used by ``repr`` and error messages when the full script printer (rvm.script)
is not loaded; it shows every loop and block as written, without sugar.
"""
from rvm.tir.buffer import Buffer
from rvm.tir.expr import IntImm, IterVar
from rvm.tir.expr_printer import expr_text
from rvm.tir import stmt as s

_KIND = {s.ForKind.SERIAL: "serial", s.ForKind.PARALLEL: "parallel",
         s.ForKind.VECTORIZED: "vectorized", s.ForKind.UNROLLED: "unroll",
         s.ForKind.THREAD_BINDING: "thread_binding"}
_AXIS = {IterVar.DataPar: "spatial", IterVar.CommReduce: "reduce", IterVar.Ordered: "scan",
         IterVar.Opaque: "opaque"}


def _shape(dims):
    inner = ", ".join(expr_text(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def buffer_decl(buf):
    """``T.Buffer((m, n), "float32")``."""
    return f'T.Buffer({_shape(buf.shape)}, "{buf.dtype}")'


def _region(region):
    parts = []
    for r in region.region:
        if isinstance(r.extent, IntImm) and r.extent.value == 1:
            parts.append(expr_text(r.min))
        else:
            parts.append(f"{expr_text(r.min)}:{expr_text(r.min + r.extent)}")
    return f"{region.buffer.name}[{', '.join(parts)}]"


class _Printer:
    def __init__(self):
        self.lines = []

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def stmt(self, node, depth):
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            self.emit(depth, f"<{type(node).__name__}>")
        else:
            method(node, depth)

    def _SeqStmt(self, node, depth):
        for item in node.seq:
            self.stmt(item, depth)

    def _For(self, node, depth):
        kind = _KIND[node.kind]
        starts_at_zero = isinstance(node.min, IntImm) and node.min.value == 0
        bounds = expr_text(node.extent) if starts_at_zero else \
            f"{expr_text(node.min)}, {expr_text(node.min + node.extent)}"
        loop = f"range({bounds})" if kind == "serial" and not node.annotations else \
            f"T.{kind}({bounds})"
        self.emit(depth, f"for {node.loop_var.name_hint} in {loop}:")
        self.stmt(node.body, depth + 1)

    def _While(self, node, depth):
        self.emit(depth, f"while {expr_text(node.condition)}:")
        self.stmt(node.body, depth + 1)

    def _BufferStore(self, node, depth):
        index = ", ".join(expr_text(i) for i in node.indices)
        self.emit(depth, f"{node.buffer.name}[{index}] = {expr_text(node.value)}")

    def _Evaluate(self, node, depth):
        self.emit(depth, f"T.evaluate({expr_text(node.value)})")

    def _LetStmt(self, node, depth):
        self.emit(depth, f"{node.var.name_hint}: T.{node.var.dtype} = {expr_text(node.value)}")
        self.stmt(node.body, depth)

    def _AssertStmt(self, node, depth):
        self.emit(depth, f"assert {expr_text(node.condition)}, {expr_text(node.message)}")
        self.stmt(node.body, depth)

    def _IfThenElse(self, node, depth):
        self.emit(depth, f"if {expr_text(node.condition)}:")
        self.stmt(node.then_case, depth + 1)
        if node.else_case is not None:
            self.emit(depth, "else:")
            self.stmt(node.else_case, depth + 1)

    def _Allocate(self, node, depth):
        extents = _shape(node.extents)
        self.emit(depth, f'{node.buffer_var.name_hint} = T.allocate({extents}, "{node.dtype}")')
        self.stmt(node.body, depth)

    def _DeclBuffer(self, node, depth):
        self.emit(depth, f"{node.buffer.name} = T.decl_buffer({_shape(node.buffer.shape)}, "
                         f'"{node.buffer.dtype}", data={node.buffer.data.name_hint})')
        self.stmt(node.body, depth)

    def _BlockRealize(self, node, depth):
        block = node.block
        self.emit(depth, f'with T.block("{block.name_hint}"):')
        inner = depth + 1
        for iv, value in zip(block.iter_vars, node.iter_values):
            kind = _AXIS.get(iv.iter_type, "opaque")
            self.emit(inner, f"{iv.var.name_hint} = T.axis.{kind}({expr_text(iv.dom.extent)}, "
                             f"{expr_text(value)})")
        if not (isinstance(node.predicate, IntImm) and node.predicate.value):
            self.emit(inner, f"T.where({expr_text(node.predicate)})")
        self._block_body(block, inner)

    def _Block(self, node, depth):
        self.emit(depth, f'with T.block("{node.name_hint}"):')
        self._block_body(node, depth + 1)

    def _block_body(self, block, depth):
        if block.name_hint != "root" or block.reads or block.writes:
            self.emit(depth, f"T.reads({', '.join(_region(r) for r in block.reads)})")
            self.emit(depth, f"T.writes({', '.join(_region(r) for r in block.writes)})")
        for buf in block.alloc_buffers:
            self.emit(depth, f'{buf.name} = T.alloc_buffer({_shape(buf.shape)}, "{buf.dtype}")')
        if block.init is not None:
            self.emit(depth, "with T.init():")
            self.stmt(block.init, depth + 1)
        self.stmt(block.body, depth)


def stmt_text(stmt, depth=0):
    """The text of a statement, indented by ``depth`` levels."""
    printer = _Printer()
    printer.stmt(stmt, depth)
    return "\n".join(printer.lines)


def func_text(func, name=None):
    """The text of a PrimFunc, as ``@T.prim_func def name(...)``."""
    name = name or func.attrs.get("global_symbol", "main")
    params = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if isinstance(buf, Buffer):
            params.append(f"{buf.name}: {buffer_decl(buf)}")
        else:
            params.append(f"{p.name_hint}: T.{p.dtype}")
    printer = _Printer()
    printer.emit(0, "@T.prim_func")
    printer.emit(0, f"def {name}({', '.join(params)}):")
    if func.attrs:
        attrs = ", ".join(f"{k!r}: {v!r}" for k, v in func.attrs.items())
        printer.emit(1, f"T.func_attr({{{attrs}}})")
    printer.stmt(func.body, 1)
    return "\n".join(printer.lines)
