"""Entry points: parse an ``@I.ir_module`` class, a decorated function, or source text."""
import ast
import inspect
import sys
import textwrap

from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.expr import ExternFunc
from rvm.script.parser.core import DEFAULT_ALIASES, ScriptParser, decorator_kind
from rvm.script.parser.diagnostics import Source
from rvm.script.parser.metadata import read_metadata
from rvm.script.parser.relax_parser import RelaxParser, declare_signatures
from rvm.script.parser.tir_parser import TIRParser


def _aliases(env):
    """Names bound to the rvm.script dialect modules in ``env``, plus the usual I/T/R."""
    aliases = dict(DEFAULT_ALIASES)
    for name, value in env.items():
        if inspect.ismodule(value):
            package, _, dialect = value.__name__.rpartition(".")
            if package == __package__ and dialect in DEFAULT_ALIASES.values():
                aliases[name] = dialect
    return aliases


class ModuleContext:
    """What the functions of one module share: GlobalVars, the class name, metadata."""

    def __init__(self, source, env, aliases, metadata, class_name=None):
        self.source = source
        self.env = env
        self.aliases = aliases
        self.metadata = metadata
        self.class_name = class_name
        self.global_vars = {}
        self.free_global_vars = {}  # I.GlobalVar("f") of functions outside the module
        self.module = IRModule()


def _parse_function(ctx, node, kind, options, name=None):
    name = name or node.name
    unknown = set(options) - {"private", "pure", "check_well_formed"}
    if unknown:
        raise ctx.source.error(node, f"unknown decorator option(s) {sorted(unknown)}; "
                                     "expected private= or pure=")
    private = bool(options.get("private", False))
    if kind == "prim_func":
        parser = TIRParser(ctx.source, ctx.env, ctx.aliases)
        return parser.parse_function(node, name, private)
    parser = RelaxParser(ctx.source, ctx.env, ctx.aliases, ctx)
    return parser.parse_function(node, name, private, bool(options.get("pure", True)))


def parse_module_class(ctx, node):
    """The IRModule of an ``@I.ir_module`` class."""
    functions = []
    externs = []
    attrs = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            kind, options = decorator_kind(ctx.source, item, ctx.aliases)
            if kind not in ("prim_func", "function"):
                raise ctx.source.error(item, f"function '{item.name}' of an ir_module needs "
                                             "@T.prim_func or @R.function")
            if item.name in ctx.global_vars:
                raise ctx.source.error(item, f"the module already has a function named "
                                             f"'{item.name}'")
            ctx.global_vars[item.name] = GlobalVar(item.name)
            functions.append((item, kind, options))
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
            continue  # docstring
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Call) and \
                ScriptParser(ctx.source, aliases=ctx.aliases).dotted(
                    item.value.func) == "ir.module_attrs":
            attrs.update(ScriptParser(ctx.source, aliases=ctx.aliases).eval(
                item.value.args[0]) if item.value.args else {})
        elif isinstance(item, ast.Pass):
            continue
        elif isinstance(item, ast.Assign) and len(item.targets) == 1 and \
                isinstance(item.targets[0], ast.Name):
            name = item.targets[0].id  # my_ext = R.ExternFunc("my_ext"), as TVM prints it
            value = RelaxParser(ctx.source, ctx.env, ctx.aliases, ctx).eval(item.value)
            if not isinstance(value, ExternFunc):
                raise ctx.source.error(item, f"'{name}' of an ir_module: expected "
                                             f"R.ExternFunc(...), got {type(value).__name__}")
            if name in ctx.global_vars:
                raise ctx.source.error(item, f"the module already has a function named "
                                             f"'{name}'")
            ctx.global_vars[name] = GlobalVar(name)
            externs.append((name, value))
        else:
            raise ctx.source.error(item, f"unsupported statement ({type(item).__name__}) in an "
                                         "ir_module class; expected @T.prim_func or "
                                         "@R.function definitions")
    ordered = [f for f in functions if f[1] == "prim_func"] + \
        [f for f in functions if f[1] == "function"]
    if any(kind == "function" for _, kind, _ in functions):
        declare_signatures(ctx, [f[0] for f in functions if f[1] == "function"])
    for item, kind, options in ordered:
        func = _parse_function(ctx, item, kind, options)
        ctx.module.add(ctx.global_vars[item.name], func)
    for name, value in externs:
        ctx.module.add(ctx.global_vars[name], value)
    mod = IRModule(ctx.module.functions, attrs)
    return mod


def parse_source(source, env=None, name=None):
    """An IRModule, PrimFunc or relax Function from a Source holding one decorated definition."""
    env = dict(env or {})
    tree = source.parse()
    metadata = read_metadata(source, tree)
    defs = [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))]
    if len(defs) != 1:
        raise source.error(defs[1] if len(defs) > 1 else None,
                           f"expected one @I.ir_module class or one @T.prim_func / @R.function "
                           f"definition, found {len(defs)}")
    node = defs[0]
    aliases = _aliases(env)
    kind, options = decorator_kind(source, node, aliases)
    if isinstance(node, ast.ClassDef):
        if kind != "ir_module":
            raise source.error(node, f"class '{node.name}' needs the @I.ir_module decorator")
        ctx = ModuleContext(source, env, aliases, metadata, node.name)
        return parse_module_class(ctx, node)
    if kind not in ("prim_func", "function"):
        raise source.error(node, f"function '{node.name}' needs @T.prim_func or @R.function")
    ctx = ModuleContext(source, env, aliases, metadata)
    return _parse_function(ctx, node, kind, options, name)


def from_source(text, filename="<string>"):
    """Parses script text (as printed by ``script()``) into an IRModule or a function.

    >>> f = from_source('''
    ... @T.prim_func
    ... def add_one(A: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         A[i] = A[i] + T.float32(1)
    ... ''')
    >>> type(f).__name__, f.attrs["global_symbol"]
    ('PrimFunc', 'add_one')
    """
    return parse_source(Source(textwrap.dedent(text), filename))


def _source_of(obj):
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as err:
        raise OSError(f"cannot read the source of {getattr(obj, '__qualname__', obj)!r}: {err}; "
                      "use rvm.script.from_source(text) for programs without a file") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first_code = next((ln for ln in lines if ln.strip()), "")
    indent = len(first_code) - len(first_code.lstrip())
    return Source(dedented, filename, first, indent)


def caller_env(depth=2):
    """The globals and locals of the frame ``depth`` levels up (names a script may use)."""
    frame = sys._getframe(depth)
    env = dict(frame.f_globals)
    env.update(frame.f_locals)
    return env


def parse_object(obj, env):
    """Parses a decorated class or function object from its source file."""
    source = _source_of(obj)
    if inspect.isfunction(obj):
        env = dict(env)
        env.update(obj.__globals__)
        closure = inspect.getclosurevars(obj)
        env.update(closure.nonlocals)
    return parse_source(source, env)
