"""rvm.script: the script form of IR (TVMScript syntax), its parser and its printer.

``from rvm.script import ir as I, relax as R, tir as T`` gives the
namespaces; ``from_source(text)`` parses printed text; importing this
package installs the printer behind ``IRModule.script()``/``show()``.

This package is a facade; the definitions live in its modules.
"""
from rvm.script import ir, relax, tir
from rvm.script import printer
from rvm.script.ir import ir_module
from rvm.script.parser.diagnostics import ParseError
from rvm.script.parser.entry import from_source

__all__ = ["ParseError", "from_source", "ir", "ir_module", "printer", "relax", "tir"]
