"""rvm.script.printer: IR as script text. Importing it installs the printer behind
``IRModule.script()``, ``node.script()`` and ``repr``.

This package is a facade; the definitions live in its modules.
"""
from rvm.script.printer.module import script

__all__ = ["script"]
