"""rvm.script: the script form of IR (TVMScript syntax), its parser and its printer.

``from rvm.script import ir as I, relax as R, tir as T`` gives the
namespaces; ``from_source(text)`` parses printed text. Importing this
package installs the printer behind ``IRModule.script()``/``show()``.

This package is a facade; the definitions live in its modules. It loads
only the printer's registration eagerly (so lower facades may import it
without cycles) and the parser's entry for ``rvm.ir.load_json``; the parser and
namespaces load on first use.
"""
import importlib

from rvm.ir.json_io import register_script_parser
from rvm.script import printer


@register_script_parser
def _parse(text, filename):
    return importlib.import_module("rvm.script.parser.entry").from_source(text, filename)

_LAZY = {
    "ir": ("rvm.script.parser.ir", None),
    "relax": ("rvm.script.parser.relax", None),
    "tir": ("rvm.script.parser.tir", None),
    "ir_module": ("rvm.script.parser.ir", "ir_module"),
    "ParseError": ("rvm.script.parser.diagnostics", "ParseError"),
    "from_source": ("rvm.script.parser.entry", "from_source"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'rvm.script' has no attribute {name!r}")
    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    return module if attr is None else getattr(module, attr)


__all__ = ["ParseError", "from_source", "ir", "ir_module", "printer", "relax", "tir"]
