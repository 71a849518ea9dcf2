"""rvm.ir.transform, the pass infrastructure (TVM's ``tvm.transform``): passes are small
values, run under a PassContext.

A pass maps an IRModule to an IRModule. ``Sequential`` composes passes and
skips those the context disables (by name or by opt_level); instruments see
every pass that runs.

>>> @module_pass(opt_level=0, name="Identity")
... def identity(mod, ctx):
...     return mod
>>> from rvm.ir.module import IRModule
>>> mod = IRModule()
>>> Sequential([identity])(mod) is mod
True
"""
import functools
import inspect
import threading

from rvm.ir.module import IRModule
from rvm.support.recursion import deep_recursion


class PassInfo:
    """What a pass is: its name, the opt_level it needs, and the passes it requires."""

    def __init__(self, opt_level, name, required=(), traceable=False):
        self.opt_level = int(opt_level)
        self.name = name
        self.required = tuple(required)
        self.traceable = traceable

    def __repr__(self):
        return f"PassInfo(name={self.name!r}, opt_level={self.opt_level})"


class PassInstrument:
    """Hooks around pass execution; subclass and override what you need."""

    def enter_pass_ctx(self):
        """Called when the PassContext holding this instrument is entered."""

    def exit_pass_ctx(self):
        """Called when that PassContext is exited."""

    def should_run(self, mod, info):
        """Return False to skip the pass."""
        return True

    def run_before_pass(self, mod, info):
        """Called before a pass runs."""

    def run_after_pass(self, mod, info):
        """Called after a pass ran, with its result."""


_context_stack = threading.local()


class PassContext:
    """The settings passes run under: opt level, required/disabled passes, instruments, config.

    >>> with PassContext(opt_level=3, disabled_pass=["FoldConstant"]) as ctx:
    ...     PassContext.current() is ctx
    True
    """

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None,
                 config=None):
        self.opt_level = int(opt_level)
        self.required_pass = set(required_pass or ())
        self.disabled_pass = set(disabled_pass or ())
        self.instruments = list(instruments or ())
        self.config = dict(config or {})
        for inst in self.instruments:
            if not isinstance(inst, PassInstrument):
                raise TypeError(f"PassContext instruments must be PassInstrument, "
                                f"got {type(inst).__name__}")

    @staticmethod
    def current():
        """The innermost active context (a default one when none is active)."""
        stack = getattr(_context_stack, "stack", None)
        if not stack:
            _context_stack.stack = stack = [PassContext()]
        return stack[-1]

    def __enter__(self):
        PassContext.current()  # make sure the default sits at the bottom
        _context_stack.stack.append(self)
        for inst in self.instruments:
            inst.enter_pass_ctx()
        return self

    def __exit__(self, *exc):
        for inst in self.instruments:
            inst.exit_pass_ctx()
        _context_stack.stack.pop()

    def pass_enabled(self, info):
        """Whether a Sequential runs the pass described by ``info`` in this context."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level


class Pass:
    """Base class: ``transform_module(mod, ctx)`` does the work; calling the pass runs it."""

    info = PassInfo(0, "Pass")

    def transform_module(self, mod, ctx):
        raise NotImplementedError

    def __call__(self, mod):
        if not isinstance(mod, IRModule):
            raise TypeError(f"pass {self.info.name} expects an IRModule, got {type(mod).__name__}")
        ctx = PassContext.current()
        for inst in ctx.instruments:
            if not inst.should_run(mod, self.info):
                return mod
        for inst in ctx.instruments:
            inst.run_before_pass(mod, self.info)
        with deep_recursion():
            result = self.transform_module(mod, ctx)
        if not isinstance(result, IRModule):
            raise TypeError(f"pass {self.info.name} returned {type(result).__name__}, "
                            f"expected an IRModule")
        for inst in ctx.instruments:
            inst.run_after_pass(result, self.info)
        return result

    def __repr__(self):
        return f"<{type(self).__name__} {self.info.name}>"


class ModulePass(Pass):
    """A pass from a function ``fn(mod, ctx) -> mod``."""

    def __init__(self, fn, info):
        self.fn = fn
        self.info = info

    def transform_module(self, mod, ctx):
        return self.fn(mod, ctx)


class Sequential(Pass):
    """Runs passes in order, skipping those the current PassContext disables.

    Required passes named by a pass's ``info.required`` are looked up in the
    pass registry and run first when they are not already in the sequence.
    """

    def __init__(self, passes=None, opt_level=0, name="sequential", required=()):
        self.passes = list(passes or ())
        for p in self.passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential expects passes, got {type(p).__name__}")
        self.info = PassInfo(opt_level, name, required)

    def transform_module(self, mod, ctx):
        names = {p.info.name for p in self.passes}
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for required in p.info.required:
                if required not in names:
                    mod = get_pass(required)(mod)
            mod = p(mod)
        return mod


def _make_pass_decorator(build):
    """The decorator protocol shared by module_pass and the function-pass decorators.

    ``build(fn, info)`` makes the pass. The decorator accepts a function, or a
    class whose instances have ``transform_module`` / ``transform_function``;
    applied to a class it returns a class whose instances are passes.
    """

    def decorator(pass_func=None, opt_level=0, name=None, required=(), traceable=False):
        def create(target):
            pass_name = name or target.__name__
            info = PassInfo(opt_level, pass_name, required, traceable)
            if inspect.isclass(target):
                @functools.wraps(target, updated=())
                def make_instance(*args, **kwargs):
                    inner = target(*args, **kwargs)
                    method = getattr(inner, "transform_module", None) or inner.transform_function
                    return build(method, info)

                return make_instance
            return build(target, info)

        if pass_func is not None:
            return create(pass_func)
        return create

    return decorator


module_pass = _make_pass_decorator(ModulePass)
module_pass.__doc__ = """Makes a module pass from ``fn(mod, ctx) -> mod`` (or a class with
``transform_module``). Use as ``@module_pass`` or ``@module_pass(opt_level=1, name="X")``."""


_PASS_REGISTRY = {}


def register_pass(name, factory):
    """Registers ``factory() -> Pass`` under ``name`` (for required passes and pipelines)."""
    _PASS_REGISTRY[name] = factory
    return factory


def get_pass(name):
    """A new instance of the registered pass ``name``."""
    if name not in _PASS_REGISTRY:
        raise ValueError(f"no pass named {name!r} is registered; "
                         f"known: {', '.join(sorted(_PASS_REGISTRY)) or 'none'}")
    return _PASS_REGISTRY[name]()


def PrintIR(header="", show_meta=False):  # noqa: N802  (passes are CamelCase factories)
    """A pass that prints the module (with an optional header) and returns it unchanged."""

    def print_ir(mod, ctx):
        if header:
            print(header)
        print(mod.script(show_meta=show_meta))
        return mod

    return ModulePass(print_ir, PassInfo(0, "PrintIR"))


_PIPELINES = {}


def register_pipeline(name, factory):
    """Registers ``factory(**kwargs) -> Pass`` as the named pipeline ``name``."""
    _PIPELINES[name] = factory
    return factory


def get_pipeline(name="default", **kwargs):
    """The pass of the named pipeline (ValueError listing known names if absent)."""
    if isinstance(name, Pass):
        return name
    if name not in _PIPELINES:
        raise ValueError(f"unknown pipeline {name!r}; known: {', '.join(sorted(_PIPELINES))}")
    return _PIPELINES[name](**kwargs)
