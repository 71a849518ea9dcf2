"""A Codegen function as a flat list of operator nodes, what the example codegens emit from.

MergeCompositeFunctions and FuseOpsByPattern(annotate_codegen=True) give a
function with the ``Codegen`` attribute whose body binds local composite
functions and calls them. ``extract_subgraph`` inlines those calls and
numbers every value: the parameters are inputs 0..n-1, then each operator
call is a node; the values returned (a tensor or a tuple of them) are the outputs.
"""
from rvm.relax.binding import SeqExpr
from rvm.relax.expr import Call, Tuple, Var
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.packed_func import get_global_func, register_func


class Node:
    """One operator call: ``op`` (the operator name without ``relax.``), ``inputs`` (ids),
    the result ``shape`` and ``dtype``, and its own ``id``."""

    def __init__(self, ident, op, inputs, shape, dtype):
        self.id = ident
        self.op = op
        self.inputs = list(inputs)
        self.shape = tuple(shape)
        self.dtype = dtype


class Subgraph:
    """``name`` (the function's symbol), ``inputs`` [(id, shape, dtype)], ``nodes`` and
    ``outputs`` (the ids returned: several when the function returns a tuple)."""

    def __init__(self, name):
        self.name = name
        self.inputs = []
        self.nodes = []
        self.outputs = []

    def shape_of(self, ident):
        """The shape of value ``ident``."""
        for i, shape, _ in self.inputs:
            if i == ident:
                return shape
        return next(n.shape for n in self.nodes if n.id == ident)


def static_tensor(sinfo, codegen, what):
    """(shape, dtype) of a tensor struct info of static shape; ValueError naming ``what``."""
    values = getattr(getattr(sinfo, "shape", None), "values", None)
    if not isinstance(sinfo, TensorStructInfo) or values is None or not all(
            isinstance(getattr(d, "value", None), int) for d in values):
        raise ValueError(f"{codegen}: {what} must be a tensor of static shape, got {sinfo!r}")
    return tuple(d.value for d in values), str(sinfo.dtype)


class _Extractor:
    def __init__(self, codegen, supported):
        self.codegen = codegen
        self.supported = supported
        self.next_id = 0
        self.graph = None

    def run(self, func, name):
        self.graph = Subgraph(name)
        env = {}
        for param in func.params:
            shape, dtype = static_tensor(param.struct_info_, self.codegen,
                                         f"parameter '{param.name_hint}' of '{name}'")
            env[id(param)] = self._new_id()
            self.graph.inputs.append((env[id(param)], shape, dtype))
        result = self._body(func, env, {})
        self.graph.outputs = list(result) if isinstance(result, tuple) else [result]
        return self.graph

    def _new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def _body(self, func, env, local_funcs):
        body = func.body
        if not isinstance(body, SeqExpr):
            return self._value(body, env)
        for block in body.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(value, Function):
                    local_funcs[id(binding.var)] = value
                elif isinstance(value, Var):
                    env[id(binding.var)] = self._value(value, env)
                elif isinstance(value, Call):
                    env[id(binding.var)] = self._call(binding.var, value, env, local_funcs)
                else:
                    raise ValueError(f"{self.codegen}: cannot generate code for binding "
                                     f"'{binding.var.name_hint}' ({type(value).__name__})")
        return self._value(body.body, env)

    def _value(self, expr, env):
        if isinstance(expr, Var) and id(expr) in env:
            return env[id(expr)]
        if isinstance(expr, Tuple) and all(isinstance(f, Var) and id(f) in env
                                           for f in expr.fields):
            return tuple(env[id(f)] for f in expr.fields)
        raise ValueError(f"{self.codegen}: expected a tensor variable of the subgraph, got "
                         f"{type(expr).__name__} {getattr(expr, 'name_hint', '')}".rstrip())

    def _call(self, var, call, env, local_funcs):
        args = [self._value(a, env) for a in call.args]
        if any(isinstance(a, tuple) for a in args):
            raise ValueError(f"{self.codegen}: binding '{var.name_hint}' passes a tuple; "
                             "expected tensor arguments")
        callee = local_funcs.get(id(call.op)) if isinstance(call.op, Var) else call.op
        if isinstance(callee, Function):
            inner = {id(p): a for p, a in zip(callee.params, args)}
            result = self._body(callee, inner, {})
            if isinstance(result, tuple):
                raise ValueError(f"{self.codegen}: composite function of binding "
                                 f"'{var.name_hint}' returns a tuple; expected one tensor")
            return result
        if not isinstance(callee, Op):
            raise ValueError(f"{self.codegen}: cannot generate code for a call of "
                             f"{type(call.op).__name__} (binding '{var.name_hint}')")
        op = callee.name[len("relax."):] if callee.name.startswith("relax.") else callee.name
        if op not in self.supported:
            raise ValueError(f"{self.codegen}: operator '{callee.name}' is not supported; "
                             f"supported: {', '.join(sorted(self.supported))}")
        shape, dtype = static_tensor(var.struct_info_, self.codegen, f"'{var.name_hint}'")
        node = Node(self._new_id(), op, args, shape, dtype)
        self.graph.nodes.append(node)
        return node.id


def extract_subgraph(func, codegen, supported):
    """The Subgraph of Codegen function ``func`` (named by its ``global_symbol``), using only
    operators in ``supported`` (names without ``relax.``); ValueError naming what is not."""
    name = func.get_attr("global_symbol")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{codegen}: the function needs a global_symbol that is a C "
                         f"identifier, got {name!r}")
    return _Extractor(codegen, supported).run(func, name)


def register_codegen(name):
    """Decorator: registers the function as the codegen ``relax.ext.<name>`` unless one of
    that name is registered already (a user's own codegen of the name, registered before
    rvm's example codegens were imported, stays the one RunCodegen calls)."""
    def register(fn):
        if get_global_func("relax.ext." + name, allow_missing=True) is None:
            register_func("relax.ext." + name, fn)
        return fn
    return register
