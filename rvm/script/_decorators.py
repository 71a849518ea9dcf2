"""What the ``T``/``R``/``I`` decorators and annotations do when Python runs the definitions.

Python evaluates decorators and parameter annotations when it runs a
``def``; the bodies are never run. Annotations therefore evaluate to inert
markers, a ``@T.prim_func``/``@R.function`` inside a class defers to the
class's ``@I.ir_module`` (which parses the whole class from its source),
and a stand-alone one parses its function at once.
"""
import sys

from rvm.script.parser.entry import parse_object


class Annotation:
    """An evaluated annotation such as ``R.Tensor((1, "m"), "float32")``; the parser reads the
    source text instead, so this only records the call."""

    def __init__(self, name, args=(), kwargs=None):
        self.name = name
        self.args = args
        self.kwargs = dict(kwargs or {})

    def __call__(self, *args, **kwargs):
        return Annotation(self.name, args, kwargs)

    def __repr__(self):
        return f"<annotation {self.name}>"


class DeferredFunction:
    """A decorated function inside an ``@I.ir_module`` class, parsed with its class."""

    def __init__(self, func, kind, options):
        self.func = func
        self.kind = kind
        self.options = options
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__

    def __repr__(self):
        return f"<{self.kind} {self.__qualname__}, parsed by its @I.ir_module class>"


def _in_class(func):
    parts = func.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def function_decorator(kind, func, options, env):
    """Applies ``@T.prim_func``/``@R.function`` (with or without options)."""
    def decorate(f):
        """Applies the decorator to ``f``."""
        if _in_class(f):
            return DeferredFunction(f, kind, options)
        parsed = parse_object(f, env)
        parsed.__name__ = f.__name__  # as TVM's: the parsed function keeps the Python name
        return parsed

    return decorate(func) if func is not None else decorate


def frame_depth_env(depth):
    """Globals and locals of the frame ``depth`` levels above the caller (the user's code)."""
    frame = sys._getframe(depth + 1)
    env = dict(frame.f_globals)
    env.update(frame.f_locals)
    return env
