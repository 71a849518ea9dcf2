"""The ``I`` namespace of the script: ``from rvm.script import ir as I``.

``@I.ir_module`` on a class parses the class (its ``@T.prim_func`` and
``@R.function`` methods) from its source into an IRModule.
"""
from rvm.script._decorators import Annotation, frame_depth_env
from rvm.script.parser.entry import parse_object


def ir_module(cls):
    """Decorator: the IRModule of a class of ``@T.prim_func``/``@R.function`` definitions."""
    return parse_object(cls, frame_depth_env(1))


module_attrs = Annotation("module_attrs")
