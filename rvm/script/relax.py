"""The ``R`` namespace of the script: ``from rvm.script import relax as R``.

``@R.function`` parses a Relax function from its source. ``R.Tensor``,
``R.Tuple``, ``R.Shape``, ``R.Object``, ``R.Prim`` and ``R.Callable`` are
annotations; the parser reads them from the source, so here they only
need to evaluate.
"""
from rvm.script._decorators import Annotation, function_decorator, frame_depth_env


def function(func=None, **options):
    """Decorator: the relax Function of a Relax function (``private=True``, ``pure=False``)."""
    return function_decorator("function", func, options, frame_depth_env(1))


Tensor = Annotation("Tensor")
Tuple = Annotation("Tuple")
Shape = Annotation("Shape")
Object = Annotation("Object")
Prim = Annotation("Prim")
Callable = Annotation("Callable")
