"""Relax nodes printed on their own (``var.script()``, ``sinfo.script()``, a binding, a
block, an ``If``): TVM's fragment forms. With ``verbose_expr=True`` every variable the
fragment uses without defining it is declared where it is first used, as TVM prints it
(``x = T.int64()``, ``a: R.Tensor((1, x), dtype="float32")``); without, it prints by name.
Relax types (``ShapeType``, ``TensorType`` ...) print as their struct-info spelling.
"""
from rvm.ir.expr import GlobalVar
from rvm.ir.type import FuncType, PrimType, TupleType
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si
from rvm.relax import ty as _ty
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.op.registry import Op
from rvm.script.printer.names import NameTable, identifier
from rvm.script.printer.relax import Metadata, RelaxPrinter
from rvm.script.printer.tir import INDENT, var_decl
from rvm.tir.expr_printer import quote

_RELAX_TYPES = (_ty.ShapeType, _ty.ObjectType, _ty.PackedFuncType, _ty.TensorType)
_EXPRS = (_r.Call, _r.Tuple, _r.TupleGetItem, _r.ShapeExpr, _r.PrimValue, _r.StringImm,
          _r.DataTypeImm, _r.ExternFunc, _r.Constant, _r.Var, Op)


class FragmentPrinter(RelaxPrinter):
    """A RelaxPrinter that declares the free variables of what it prints (when verbose)."""

    def __init__(self, verbose, **config):
        super().__init__(NameTable(), Metadata(), **config)
        self.verbose = verbose
        self.anchor = None  # (line index, depth) declarations go to inside a dataflow block
        if verbose:
            self.tir.on_free_var = self._declare_tir

    def _declare(self, text):
        """Emits a declaration before the statement being printed (before the ``with`` of a
        dataflow block: the block is no scope of its own)."""
        if self.anchor is None:
            self.emit(self.depth, text)
            return
        index, depth = self.anchor
        self.lines.insert(index, INDENT * depth + text)
        self.anchor = (index + 1, depth)

    def _declare_tir(self, var):
        name = self.names.define(var, var.name_hint)
        self._declare(f"{name} = {var_decl(var)}")
        return name

    def block(self, block, depth):
        if not isinstance(block, DataflowBlock):
            super().block(block, depth)
            return
        self.anchor = (len(self.lines), depth)
        try:
            super().block(block, depth)
        finally:
            self.anchor = None

    def expr(self, e):
        if isinstance(e, GlobalVar):  # no module around it: the function's name
            return identifier(e.name_hint)
        return super().expr(e)

    def var(self, v):
        name = self.names.get(v)
        if name is not None or not self.verbose:
            return name if name is not None else v.name_hint
        sinfo = v.struct_info_
        ann = f": {self.sinfo(sinfo)}" if sinfo is not None else ""  # its TIR vars first
        name = self.names.define(v, v.name_hint)
        self._declare(f"{name}{ann}")
        return name

    def if_expr(self, node, depth):
        """``if c: ... else: ...``, each branch ending in its value."""
        self.depth = depth
        self.emit(depth, f"if {self.expr(node.cond)}:")
        for k, branch in enumerate((node.true_branch, node.false_branch)):
            if k:
                self.emit(depth, "else:")
            outer = self.names
            self.names = self.tir.names = outer.child()
            try:
                result = self.seq_body(branch, depth + 1)
                self.emit(depth + 1, result)
            finally:
                self.names = self.tir.names = outer


def type_text(t):
    """A Relax or IR type in script form: ``R.Shape(ndim=3)``, ``R.Object``, ``R.PackedFunc``,
    ``R.Tensor(ndim=2, dtype="float32")``, ``R.Tuple(...)``, ``R.Callable((...), ...)``."""
    if isinstance(t, _ty.ShapeType):
        return f"R.Shape(ndim={t.ndim})"
    if isinstance(t, _ty.ObjectType):
        return "R.Object"
    if isinstance(t, _ty.PackedFuncType):
        return "R.PackedFunc"
    if isinstance(t, _ty.TensorType):
        dtype = "void" if t.dtype is None else str(t.dtype)
        return f"R.Tensor(ndim={t.ndim}, dtype={quote(dtype)})"
    if isinstance(t, PrimType):
        return f"R.Prim({quote(str(t.dtype))})"
    if isinstance(t, TupleType):
        return f"R.Tuple({', '.join(type_text(f) for f in t.fields)})"
    if isinstance(t, FuncType):
        args = ", ".join(type_text(a) for a in t.arg_types)
        args = f"({args},)" if len(t.arg_types) == 1 else f"({args})"
        return f"R.Callable({args}, {type_text(t.ret_type)})"
    return None


def print_fragment(node, verbose_expr=False, show_all_struct_info=True):
    """The text of a Relax node printed alone, or None when ``node`` is not one."""
    if isinstance(node, _RELAX_TYPES):  # tvm.ir's TupleType/FuncType keep their own form
        return type_text(node)
    printer = FragmentPrinter(verbose_expr, show_all_struct_info=show_all_struct_info)
    text = None
    if isinstance(node, _si.StructInfo):
        text = printer.sinfo(node)
    elif isinstance(node, _EXPRS):
        text = printer.expr(node)
    elif isinstance(node, (VarBinding, MatchCast)):
        printer.binding(node, 0)
    elif isinstance(node, BindingBlock):
        printer.block(node, 0)
    elif isinstance(node, SeqExpr):
        text = printer.seq_body(node, 0)
    elif isinstance(node, _r.If):
        printer.if_expr(node, 0)
    else:
        return None
    return "\n".join(printer.lines + ([text] if text is not None else []))
