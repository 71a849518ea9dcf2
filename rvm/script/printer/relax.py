"""Relax functions, expressions and struct info as script text (``@R.function``)."""
import numpy as np

from rvm.ir.expr import GlobalVar
from rvm.ir.base import structural_equal
from rvm.ir.node import Node
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si
from rvm.relax.analysis.var_analysis import all_global_vars, used_vars
from rvm.relax.binding import DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.tir import expr as _e
from rvm.runtime.ndarray import NDArray
from rvm.script.parser.metadata import CONSTANT_KEY, NDARRAY_KEY, encode_array
from rvm.script.printer.names import NameTable, identifier
from rvm.script.printer.relax_infer import inferred_sinfo, is_void
from rvm.script.printer.tir import INDENT, decorator, value_text, var_decl
from rvm.script.printer.tir_expr import ExprPrinter
from rvm.tir.expr_printer import quote

_DPS = {"relax.call_tir": "R.call_tir", "relax.call_tir_inplace": "R.call_tir_inplace",
        "relax.call_dps_packed": "R.call_dps_packed"}


class Metadata:
    """Constants shown as ``metadata["relax.expr.Constant"][i]`` and arrays (in function
    attributes) as ``metadata["runtime.NDArray"][i]``, numbered by first use."""

    def __init__(self):
        self.entries = {}
        self.index = {}

    def ref(self, value):
        """The ``metadata[...]`` text referring to ``value`` (a Constant or an NDArray)."""
        key = CONSTANT_KEY if isinstance(value, _r.Constant) else NDARRAY_KEY
        k = self.index.get(id(value))
        if k is None:
            entries = self.entries.setdefault(key, [])
            k = self.index[id(value)] = len(entries)
            entries.append(value)
        return f'metadata["{key}"][{k}]'

    def array_ref(self, value):
        """``ref`` for an NDArray attribute value; None for anything else."""
        return self.ref(value) if isinstance(value, NDArray) else None

    def section(self):
        """The ``metadata = {...}`` assignment the parser reads back."""
        lines = []
        for key, values in self.entries.items():
            lines.append(("metadata = {" if not lines else "], ") + f'"{key}": [')
            for value in values:
                entry = encode_array((value.data if key == CONSTANT_KEY else value).numpy())
                lines.append(f'    {{"dtype": {quote(entry["dtype"])}, "shape": '
                             f'{entry["shape"]}, "data": {quote(entry["data"])}}},')
        lines.append("]}")
        return "\n".join(lines)


def _tir_vars(func):
    """The symbolic TIR variables a Relax function mentions, in order of first appearance."""
    found = []
    seen = set()

    def visit(x):
        """Walks ``x`` recording what the caller looks for."""
        if isinstance(x, Node):
            if id(x) in seen:
                return
            seen.add(id(x))
            if isinstance(x, _e.Var):
                found.append(x)
                return
            if isinstance(x, (_si.StructInfo,)) or hasattr(x, "_fields"):
                for name in x._fields:
                    visit(getattr(x, name))
            sinfo = getattr(x, "struct_info_", None)
            if isinstance(x, _r.Var) and sinfo is not None:
                visit(sinfo)
        elif isinstance(x, (list, tuple)):
            for item in x:
                visit(item)
        elif isinstance(x, dict):
            for item in x.values():
                visit(item)

    for param in func.params:
        visit(param.struct_info_)
    visit(func.ret_struct_info)
    visit(func.body)
    return found


def _uses_global_vars(func, module_functions):
    """Whether ``func`` refers to a function of its module (so it prints ``cls = ...``)."""
    return any(gv.name_hint in module_functions for gv in all_global_vars(func.body))


def _as_lists(value):
    """Operator attributes print their sequences as lists, as TVM's printer does
    (``strides=[1, 1]``); the builders store them as tuples."""
    if isinstance(value, (tuple, list)):
        return [_as_lists(v) for v in value]
    return value


class RelaxPrinter:
    """Prints one Relax function's bindings and expressions into ``lines``."""

    def __init__(self, names, meta, module_functions=None, show_all_struct_info=True,
                 module_alias="cls"):
        self.names = names
        self.meta = meta if meta is not None else Metadata()
        self.module_functions = module_functions
        self.show_all_struct_info = show_all_struct_info
        self.module_alias = module_alias
        self.used_vars = None  # ids of the Relax variables the function refers to
        self.depth = 0  # indentation of the statement being printed
        self.in_dataflow = False  # printing a dataflow block (its outputs are listed)
        self.tir = ExprPrinter(names)
        self.lines = []
        self.signature = False

    def emit(self, depth, text):
        """Appends a line at indentation ``depth``."""
        self.lines.append(INDENT * depth + text)

    # -- struct info ---------------------------------------------------------------------
    def dim(self, d):
        """A shape dimension: plain int, or the expression (a string in signatures)."""
        if isinstance(d, _e.IntImm) and d.dtype == "int64":
            return str(d.value)
        text = self.tir(d)
        return quote(text) if self.signature else text

    def dims(self, values, brackets="()"):
        """A tuple or list of dimensions."""
        inner = ", ".join(self.dim(d) for d in values)
        if brackets == "()" and len(values) == 1:
            inner += ","
        return brackets[0] + inner + brackets[1]

    def sinfo(self, s):
        """The struct info an annotation node denotes, in TVM 0.21's printed form."""
        if isinstance(s, _si.ObjectStructInfo):
            return "R.Object"
        if isinstance(s, _si.TensorStructInfo):
            args = []
            values = s.shape_values
            if values is not None:
                args.append(self.dims(values))
            elif s.shape is not None:
                args.append(self.expr(s.shape))
            if s.dtype is not None:
                args.append(f"dtype={quote(s.dtype)}")
            if s.shape is None and s.ndim != -1:
                args.append(f"ndim={s.ndim}")
            return f"R.Tensor({', '.join(args)})" if args else "R.Tensor"
        if isinstance(s, _si.ShapeStructInfo):
            if s.values is not None:
                return f"R.Shape({self.dims(s.values, '[]')})"
            return f"R.Shape(ndim={s.ndim})"
        if isinstance(s, _si.PrimStructInfo):
            if s.value is not None:
                return f"R.Prim(value={self.prim(s.value, self.signature)})"
            return f"R.Prim({quote(s.dtype)})" if s.dtype is not None else "R.Prim"
        if isinstance(s, _si.TupleStructInfo):
            if not s.fields:
                return "R.Tuple"
            return f"R.Tuple({', '.join(self.sinfo(f) for f in s.fields)})"
        if isinstance(s, _si.FuncStructInfo):
            if s.params is None:  # opaque: impure unless it says so, returning any object
                keys = [] if isinstance(s.ret, _si.ObjectStructInfo) else \
                    [f"ret={self.sinfo(s.ret)}"]
                keys += ["purity=True"] if s.purity else []
                return f"R.Callable({', '.join(keys)})" if keys else "R.Callable"
            params = ", ".join(self.sinfo(p) for p in s.params)
            params = f"({params},)" if len(s.params) == 1 else f"({params})"
            return f"R.Callable({params}, {self.sinfo(s.ret)}, {bool(s.purity)})"
        raise TypeError(f"cannot print struct info {type(s).__name__}")

    def prim(self, value, as_string=False):
        """A scalar value as text."""
        if isinstance(value, _e.IntImm) and value.dtype == "int64":
            return str(value.value)
        if isinstance(value, _e.FloatImm) and value.dtype == "float64" and np.isfinite(value.value):
            return repr(value.value)
        if isinstance(value, _e.IntImm) and value.dtype == "bool":
            return repr(bool(value.value))
        if isinstance(value, _e.IntImm):
            return f"T.{value.dtype}({value.value})"
        text = self.tir(value)
        return quote(text) if as_string else text

    # -- expressions ---------------------------------------------------------------------
    def var(self, v):
        """The printed name of a Relax variable."""
        name = self.names.get(v)
        return name if name is not None else v.name_hint

    def expr(self, e):
        """A Relax expression as text."""
        if isinstance(e, _r.Var):
            return self.var(e)
        if isinstance(e, GlobalVar):
            if self.module_functions is None or e.name_hint not in self.module_functions:
                # printed alone, or not a function of the module: no ``cls.f`` to refer to
                return f"I.GlobalVar({quote(e.name_hint)})"
            return f"{self.module_alias or 'Module'}.{identifier(e.name_hint)}"
        if isinstance(e, _r.Constant):
            arr = e.data.numpy()
            if arr.ndim == 0 and (arr.dtype.kind in "biu" or np.isfinite(arr)):
                return f"R.const({arr.item()!r}, {quote(e.data.dtype)})"
            return self.meta.ref(e)
        if isinstance(e, _r.Tuple):
            if not e.fields:
                return "R.tuple()"
            inner = ", ".join(self.expr(f) for f in e.fields)
            return f"({inner},)" if len(e.fields) == 1 else f"({inner})"
        if isinstance(e, _r.TupleGetItem):
            return f"{self.expr(e.tuple_value)}[{e.index}]"
        if isinstance(e, _r.ShapeExpr):
            return f"R.shape({self.dims(e.values, '[]')})"
        if isinstance(e, _r.PrimValue):
            return f"R.prim_value({self.prim(e.value)})"
        if isinstance(e, _r.StringImm):
            return f"R.str({quote(e.value)})"
        if isinstance(e, _r.DataTypeImm):
            return f"R.dtype({quote(e.value)})"
        if isinstance(e, _r.ExternFunc):
            sinfo = e.struct_info_
            if isinstance(sinfo, _si.FuncStructInfo) and sinfo.params is None and \
                    not sinfo.purity and isinstance(sinfo.ret, _si.ObjectStructInfo):
                return f"R.ExternFunc({quote(e.global_symbol)})"  # the default: unstated
            return f"R.ExternFunc({quote(e.global_symbol)}, {self.sinfo(sinfo)})"
        if isinstance(e, _r.Call):
            return self.call(e)
        if isinstance(e, Op):
            return f"R.{e.name[6:] if e.name.startswith('relax.') else e.name}"
        raise TypeError(f"cannot print {type(e).__name__} as a Relax expression")

    def _sinfo_kw(self, key, sinfos):
        if not sinfos:
            return []
        if len(sinfos) == 1:
            return [f"{key}={self.sinfo(sinfos[0])}"]
        return [f"{key}=[{', '.join(self.sinfo(s) for s in sinfos)}]"]

    def call(self, e):
        """Calls a builtin, a module function (``cls.f(x)``) or a function-valued variable."""
        op = e.op
        args = [self.expr(a) for a in e.args]
        if isinstance(op, Op) and op.name in _DPS and len(e.args) >= 2:
            callee = quote(e.args[0].global_symbol) if isinstance(e.args[0], _r.ExternFunc) \
                else args[0]
            out = e.sinfo_args[0] if e.sinfo_args else None
            parts = [callee, args[1]]
            if isinstance(out, _si.TupleStructInfo) and len(out.fields) > 1:
                parts.append(f"out_sinfo=[{', '.join(self.sinfo(f) for f in out.fields)}]")
            elif out is not None:
                parts.append(f"out_sinfo={self.sinfo(out)}")
            if op.name == "relax.call_tir_inplace":
                parts.append(f"inplace_indices={list(e.attrs['inplace_indices'])}")
            if len(args) > 2:
                parts.append(f"tir_vars={args[2]}")
            return f"{_DPS[op.name]}({', '.join(parts)})"
        if isinstance(op, Op) and op.name == "relax.call_pure_packed" and e.args and \
                isinstance(e.args[0], _r.ExternFunc):
            parts = [quote(e.args[0].global_symbol)] + args[1:]
            parts += self._sinfo_kw("sinfo_args", e.sinfo_args)
            return f"R.call_pure_packed({', '.join(parts)})"
        if isinstance(op, _r.ExternFunc):
            parts = [quote(op.global_symbol)] + args + self._sinfo_kw("sinfo_args", e.sinfo_args)
            return f"R.call_packed({', '.join(parts)})"
        parts = list(args)
        for key, value in (e.attrs or {}).items():
            if key == "format" and isinstance(op, Op) and \
                    op.name in ("relax.print", "relax.assert_op"):
                parts.append(f"format=R.str({quote(value)})")  # an argument in TVM's IR
                continue
            parts.append(f"{key}={value_text(_as_lists(value), self.tir, tir_bools=False)}")
        parts += self._sinfo_kw("sinfo_args", e.sinfo_args)
        return f"{self.expr(op)}({', '.join(parts)})"

    # -- bindings ------------------------------------------------------------------------
    def annotation(self, var, value):
        """``: R.Tensor(...)`` for a binding of ``var`` to ``value``, or "" where TVM's printer
        leaves it out: a call_tir/call_dps_packed whose stated result is the variable's (or,
        with ``show_all_struct_info=False``, any value whose inferred struct info is)."""
        sinfo = var.struct_info_
        if sinfo is None:
            return ""
        hide = not self.show_all_struct_info or (
            isinstance(value, _r.Call) and isinstance(value.op, Op) and
            value.op.name in ("relax.call_tir", "relax.call_dps_packed"))
        if hide:
            inferred = inferred_sinfo(value)
            if inferred is not None and structural_equal(inferred, sinfo, map_free_vars=False):
                return ""
        return f": {self.sinfo(sinfo)}"

    def binding(self, b, depth):
        """Prints one binding."""
        self.depth = depth
        if isinstance(b.value, _r.If):
            self.if_binding(b, depth)
            return
        if isinstance(b.value, Function) and isinstance(b, VarBinding):
            name = self.names.define(b.var, b.var.name_hint)
            self.lines += print_relax_function(b.value, name, depth, self.meta,
                                               self.module_functions, local=True,
                                               config=self.config())
            return
        value = self.expr(b.value)
        if isinstance(b, MatchCast):
            ann = f": {self.sinfo(b.var.struct_info_)}" if self.show_all_struct_info and \
                b.var.struct_info_ is not None else ""
            name = self.names.define(b.var, b.var.name_hint)
            self.emit(depth, f"{name}{ann} = R.match_cast({value}, {self.sinfo(b.struct_info)})")
            return
        if is_void(b.var.struct_info_) and self._void_when_parsed(b.value) and \
                (self.used_vars is None or id(b.var) not in self.used_vars) and \
                not (self.in_dataflow and not isinstance(b.var, _r.DataflowVar)):
            self.emit(depth, value)  # a call for its effect: no variable (TVM's sugar)
            return
        ann = self.annotation(b.var, b.value)
        name = self.names.define(b.var, b.var.name_hint)
        self.emit(depth, f"{name}{ann} = {value}")

    def _void_when_parsed(self, value):
        """Whether ``value`` is a call the parser infers to return nothing (``R.Tuple``):
        an operator's, one stating ``sinfo_args``, or a call of a function of the module."""
        if not (isinstance(value, _r.Call) and is_void(inferred_sinfo(value))):
            return False
        if isinstance(value.op, Op) or value.sinfo_args:
            return True
        return isinstance(value.op, GlobalVar) and self.module_functions is not None and \
            value.op.name_hint in self.module_functions

    def config(self):
        """The printing options a nested function inherits."""
        return {"show_all_struct_info": self.show_all_struct_info,
                "module_alias": self.module_alias}

    def if_binding(self, b, depth):
        """Prints an ``if``/``else`` binding; each branch ends by assigning the variable."""
        node = b.value
        self.emit(depth, f"if {self.expr(node.cond)}:")
        branches = []
        for branch in (node.true_branch, node.false_branch):
            outer = self.names
            self.names = self.tir.names = outer.child()
            start = len(self.lines)
            try:
                result = self.seq_body(branch, depth + 1)
            finally:
                self.names = self.tir.names = outer
            branches.append((start, result))
        name = self.names.define(b.var, b.var.name_hint)
        annotation = f": {self.sinfo(b.var.struct_info_)}" if b.var.struct_info_ else ""
        # Insert "else:" and the branch results now that the variable has its name.
        (t_start, t_res), (f_start, f_res) = branches
        false_lines = self.lines[f_start:]
        del self.lines[f_start:]
        self.emit(depth + 1, f"{name}{annotation} = {t_res}")
        self.emit(depth, "else:")
        self.lines.extend(false_lines)
        self.emit(depth + 1, f"{name}{annotation} = {f_res}")

    def block(self, block, depth):
        """Prints a binding block; a dataflow block as ``with R.dataflow():`` ending in
        ``R.output`` of the variables it defines for use after it."""
        if isinstance(block, DataflowBlock):
            self.emit(depth, "with R.dataflow():")
            for b in block.bindings:
                self.in_dataflow = True
                self.binding(b, depth + 1)
            self.in_dataflow = False
            outputs = [self.var(b.var) for b in block.bindings
                       if not isinstance(b.var, _r.DataflowVar)]
            self.emit(depth + 1, f"R.output({', '.join(outputs)})")
        else:
            for b in block.bindings:
                self.binding(b, depth)

    def seq_body(self, body, depth):
        """Prints the blocks of a SeqExpr and returns the text of its result."""
        if not isinstance(body, SeqExpr):
            self.depth = depth
            return self.expr(body)
        for block in body.blocks:
            self.block(block, depth)
        self.depth = depth
        return self.expr(body.body)


def print_relax_function(func, name, depth=0, meta=None, module_functions=None,
                         module_name="Module", local=False, config=None):
    """The lines of ``@R.function def name(...) -> ...:``; inside a module (the names of its
    functions given) it refers to them as ``cls.f``, after ``cls = <module_name>`` (TVM's
    ``module_alias`` option names ``cls``; "" refers to ``Module.f``). A ``local`` function
    (bound inside another) prints without ``private=True``, after the import comment TVM
    prints there. ``config`` holds the printing options (``show_all_struct_info``)."""
    config = dict(config or {})
    names = NameTable()
    printer = RelaxPrinter(names, meta, module_functions, **config)
    printer.used_vars = {id(v) for v in used_vars(func.body)}
    head, attrs = decorator("R.function", func, name)
    if local:
        head = "@R.function(pure=False)" if not func.is_pure else "@R.function"
    tir_vars = _tir_vars(func)
    for v in tir_vars:
        names.define(v, v.name_hint)
    printer.signature = True
    params = []
    for p in func.params:
        params.append(f"{names.define(p, p.name_hint)}: {printer.sinfo(p.struct_info_)}")
    ret = f" -> {printer.sinfo(func.ret_struct_info)}" if func.ret_struct_info is not None else ""
    printer.signature = False
    inner = depth + 1
    if attrs:
        text = value_text(attrs, printer.tir, printer.meta.array_ref, tir_bools=False)
        printer.emit(inner, f"R.func_attr({text})")
    for v in tir_vars:
        printer.emit(inner, f"{names.get(v)} = {var_decl(v)}")
    alias = config.get("module_alias", "cls")
    if module_functions is not None and alias and _uses_global_vars(func, module_functions):
        printer.emit(inner, f"{alias} = {module_name}")
    result = printer.seq_body(func.body, inner)
    printer.emit(inner, f"return {result}")
    header = [INDENT * depth + head,
              INDENT * depth + f"def {name}({', '.join(params)}){ret}:"]
    if local:  # TVM prints the relax import comment before a nested function, blank-lined
        header = [INDENT * depth + "# from rvm.script import relax as R", ""] + header
        return header + printer.lines + [""]
    return header + printer.lines
