"""Registers the script printer with ``rvm.ir`` so ``IRModule.script()``, ``show()``,
``node.script()`` and ``repr`` print script text.

This module imports nothing but ``rvm.ir`` when loaded, so any facade may
import it (even ``rvm.ir``'s own) without import cycles; the printers load
on the first call.
"""
from rvm.ir.module import register_printer


def script(node, show_meta=False, **kwargs):
    """The script text of an IRModule, function, statement, expression or struct info.

    >>> from rvm.tir.expr import Var
    >>> script(Var("n", "int64") * 2)
    'n * T.int64(2)'
    """
    from rvm.script.printer.dispatch import render  # loaded on first use; see the docstring

    return render(node, show_meta, **kwargs)


register_printer(script)
