"""The ``I`` namespace of the script: ``from rvm.script import ir as I``.

``@I.ir_module`` on a class parses the class (its ``@T.prim_func`` and
``@R.function`` methods) from its source into an IRModule.
``I.GlobalVar("f")`` names a function where no ``cls.f`` can: in a Relax
function printed alone, or for a callee outside the module.
"""
from rvm.ir.expr import GlobalVar
from rvm.script._decorators import Annotation, frame_depth_env
from rvm.script.parser.entry import parse_object


def ir_module(cls=None, *, check_well_formed=True):
    """Decorator: the IRModule of a class of ``@T.prim_func``/``@R.function`` definitions.

    As in TVM, the module's Relax functions are checked to be well formed
    (ValueError listing the problems); ``@I.ir_module(check_well_formed=False)``
    skips the check, for modules that are deliberately malformed.
    """
    if not isinstance(check_well_formed, bool):
        raise TypeError(f"I.ir_module: check_well_formed must be a bool, got "
                        f"{type(check_well_formed).__name__}")
    env = frame_depth_env(1)

    def decorate(klass):
        if not isinstance(klass, type):
            raise TypeError(f"I.ir_module decorates a class, got {type(klass).__name__}")
        mod = parse_object(klass, env)
        if check_well_formed:
            from rvm.relax.analysis.well_formed import well_formed_errors

            errors = well_formed_errors(mod)
            if errors:
                raise ValueError(f"I.ir_module {klass.__name__}: the module is not well formed "
                                 "(pass check_well_formed=False to allow it):\n  " +
                                 "\n  ".join(errors))
        return mod

    return decorate(cls) if cls is not None else decorate


module_attrs = Annotation("module_attrs")

__all__ = ["GlobalVar", "ir_module", "module_attrs"]
