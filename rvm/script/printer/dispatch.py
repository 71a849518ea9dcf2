"""Rendering any printable node: modules, functions, statements, expressions, struct info."""
from rvm.ir.expr import PrimExpr
from rvm.ir.module import IRModule
from rvm.ir.node import generic_repr
from rvm.tir.buffer import Buffer
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import Stmt
from rvm.script.printer.names import NameTable, identifier
from rvm.relax.expr import ExternFunc
from rvm.script.printer.relax import Metadata, RelaxPrinter, print_relax_function
from rvm.script.printer.relax_fragment import print_fragment
from rvm.script.printer.tir_fragment import print_tir_fragment
from rvm.script.printer.tir import print_buffer, print_prim_func, print_stmt
from rvm.script.printer.tir_expr import ExprPrinter

_HEADERS = {"I": "# from rvm.script import ir as I", "T": "# from rvm.script import tir as T",
            "R": "# from rvm.script import relax as R"}
_OMITTED = "# Metadata omitted. Use show_meta=True in script() method to show it."


def _is_relax_function(func):
    return type(func).__name__ == "Function" and hasattr(func, "ret_struct_info")


def _headers(used):
    return [_HEADERS[k] for k in ("I", "T", "R") if k in used] + [""]


def _uses_tir(lines):
    return any("T." in line for line in lines)


def _finish(lines, meta, show_meta, used):
    used = set(used)
    if _uses_tir(lines):
        used.add("T")
    if any("I.GlobalVar(" in line for line in lines):
        used.add("I")
    out = _headers(used) + lines
    if meta.entries:
        if show_meta:
            out += ["", meta.section()]
        else:
            out += ["", _OMITTED]
    return "\n".join(out)


def print_module(mod, show_meta=False, config=None):
    """The text of an IRModule: ``@I.ir_module class Module:`` with its external functions
    (``f = R.ExternFunc("f")``), then its functions."""
    meta = Metadata()
    items = list(mod.functions.items())
    prims = sorted((gv.name_hint, f) for gv, f in items if isinstance(f, PrimFunc))
    relax = sorted(((gv.name_hint, f) for gv, f in items if _is_relax_function(f)),
                   key=lambda kv: kv[0])
    externs = sorted((gv.name_hint, f) for gv, f in items if isinstance(f, ExternFunc))
    other = [(gv.name_hint, f) for gv, f in items if not isinstance(f, (PrimFunc, ExternFunc))
             and not _is_relax_function(f)]
    lines = ["@I.ir_module", "class Module:"]
    for name, func in externs:
        lines.append(f"    {identifier(name)} = {print_fragment(func)}")
    attrs = {k: v for k, v in mod.attrs.items() if k != "external_mods"}
    if attrs:
        from rvm.script.printer.tir import value_text

        lines.append(f"    I.module_attrs({value_text(attrs, ExprPrinter(NameTable()), tir_bools=False)})")
    for module in mod.attrs.get("external_mods") or ():  # runtime modules: not script
        lines.append(f"    # external module {module!r}")
    used = {"I", "R"} if externs else {"I"}
    module_functions = {gv.name_hint for gv, _ in items}
    first = True
    for name, func in prims + relax:
        if not first:
            lines.append("")
        first = False
        if isinstance(func, PrimFunc):
            lines += print_prim_func(func, identifier(name), depth=1)
        else:
            used.add("R")
            lines += print_relax_function(func, identifier(name), depth=1, meta=meta,
                                          module_functions=module_functions, config=config)
    for name, func in other:
        lines.append(f"    # {name}: {type(func).__name__} (not printable as script)")
    if not items:
        lines.append("    pass")
    return _finish(lines, meta, show_meta, used)


def render(node, show_meta=False, **kwargs):
    """The script text of an IRModule, function, statement, expression or struct info.

    >>> from rvm.tir.expr import Var
    >>> render(Var("n", "int64") * 2)
    'n * T.int64(2)'
    """
    config = {k: kwargs[k] for k in ("show_all_struct_info", "module_alias") if k in kwargs}
    if isinstance(node, IRModule):
        return print_module(node, show_meta, config)
    if isinstance(node, PrimFunc):
        name = node.get_attr("global_symbol") or "main"
        return _finish(print_prim_func(node, identifier(name)), Metadata(), show_meta, {"T"})
    if _is_relax_function(node):
        meta = Metadata()
        name = node.get_attr("global_symbol") or "main"
        lines = print_relax_function(node, identifier(name), meta=meta, config=config)
        return _finish(lines, meta, show_meta, {"R"})
    if isinstance(node, Stmt):
        return "\n".join(print_stmt(node))
    tir_expr = isinstance(node, PrimExpr) and type(node).__module__.startswith("rvm.tir")
    if kwargs.get("verbose_expr") and (tir_expr or isinstance(node, Buffer)):
        return print_tir_fragment(node)
    if isinstance(node, Buffer):
        return print_buffer(node)
    if tir_expr:
        return ExprPrinter(NameTable())(node)
    text = print_fragment(node, verbose_expr=kwargs.get("verbose_expr", False),
                          show_all_struct_info=config.get("show_all_struct_info", True))
    if text is not None:
        return text
    return generic_repr(node)

