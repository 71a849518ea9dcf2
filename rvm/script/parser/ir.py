"""The ``I`` namespace of the script: ``from rvm.script import ir as I``.

``@I.ir_module`` on a class parses the class (its ``@T.prim_func`` and
``@R.function`` methods) from its source into an IRModule.
``I.GlobalVar("f")`` names a function where no ``cls.f`` can: in a Relax
function printed alone, or for a callee outside the module.
"""
from rvm.ir.expr import GlobalVar
from rvm.script._decorators import Annotation, frame_depth_env
from rvm.script.parser.entry import parse_object


def ir_module(cls):
    """Decorator: the IRModule of a class of ``@T.prim_func``/``@R.function`` definitions."""
    return parse_object(cls, frame_depth_env(1))


module_attrs = Annotation("module_attrs")

__all__ = ["GlobalVar", "ir_module", "module_attrs"]
