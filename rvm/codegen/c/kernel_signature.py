"""What a kernel expects of its arguments, shared by the C and python backends.

``KernelSignature(name, func)`` describes each parameter (a tensor with dtype
and possibly symbolic shape, or a scalar) and the order in which symbolic
dimensions are bound from the arguments and checked for consistency:
the first occurrence of a variable binds it, later occurrences and constant
or compound dimensions are checked against it.
"""
from rvm.ir.module import IRModule
from rvm.runtime.data_type import DataType
from rvm.tir.analysis.size_vars import dimension_sizes
from rvm.tir.free_vars import free_vars
from rvm.tir.expr import IntImm, Var
from rvm.tir.expr_printer import dim_text
from rvm.tir.function import PrimFunc


class ParamSpec:
    """One parameter: ``name``, ``kind`` ("tensor" or "scalar"), ``dtype``, ``shape``
    (PrimExprs, tensors only), the parameter ``var`` and its ``buffer`` (or None);
    ``is_size``: an integer scalar that is a size in a tensor's shape (a factor of
    ``n * m``), refused when negative."""

    def __init__(self, index, name, kind, dtype, var, buffer=None):
        self.index = index
        self.name = name
        self.kind = kind
        self.dtype = DataType(dtype)
        self.var = var
        self.buffer = buffer
        self.shape = tuple(buffer.shape) if buffer is not None else ()
        self.is_size = False

    def size_error(self, kernel, value):
        """The text refusing ``value`` for this size parameter of ``kernel``."""
        return f"{kernel}: parameter '{self.name}' is a size, expected >= 0, got {value}"

    @property
    def expect(self):
        """The expected type as text: ``float32[m, 784]`` or ``int64``."""
        if self.kind == "scalar":
            return str(self.dtype)
        return f"{self.dtype}[{', '.join(dim_text(d) for d in self.shape)}]"


def kernel_functions(mod):
    """The (name, PrimFunc) pairs of ``mod``, named after their GlobalVars, in module order."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"expected a lowered IRModule, got {type(mod).__name__}")
    return [(gv.name_hint, func) for gv, func in mod.functions.items()
            if isinstance(func, PrimFunc)]


class ShapeStep:
    """One step of binding: ``action`` is "bind" (first sight of ``var``), "const", "var" or
    "expr" (a check against a constant, a bound variable or a compound expression)."""

    def __init__(self, action, param, axis, dim):
        self.action = action
        self.param = param
        self.axis = axis
        self.dim = dim


class KernelSignature:
    """The parameters of ``func`` (a lowered PrimFunc) and its shape-binding plan.

    Raises ValueError when the body uses a variable no parameter defines.
    """

    def __init__(self, name, func):
        self.name = name
        self.func = func
        self.params = []
        for index, var in enumerate(func.params):
            buffer = func.buffer_map.get(var)
            if buffer is not None:
                spec = ParamSpec(index, buffer.name, "tensor", buffer.dtype, var, buffer)
            else:
                if not (var.dtype.is_int or var.dtype.is_uint or var.dtype.is_float
                        or var.dtype.is_bool):
                    raise ValueError(f"kernel '{name}': parameter '{var.name_hint}' has dtype "
                                     f"{var.dtype}; expected a buffer or an int/float/bool scalar")
                spec = ParamSpec(index, var.name_hint, "scalar", var.dtype, var)
            self.params.append(spec)
        sizes = {id(v) for p in self.params for d in p.shape for v in dimension_sizes(d)}
        for p in self.params:
            p.is_size = p.kind == "scalar" and p.dtype.is_int and id(p.var) in sizes
        self.steps = []
        self.bound = {id(p.var): p.var for p in self.params if p.kind == "scalar"}
        deferred = []
        for param in self.params:
            for axis, dim in enumerate(param.shape):
                if isinstance(dim, IntImm):
                    self.steps.append(ShapeStep("const", param, axis, dim))
                elif isinstance(dim, Var):
                    if id(dim) in self.bound:
                        self.steps.append(ShapeStep("var", param, axis, dim))
                    else:
                        self.bound[id(dim)] = dim
                        self.steps.append(ShapeStep("bind", param, axis, dim))
                else:
                    deferred.append(ShapeStep("expr", param, axis, dim))
        for step in deferred:
            self._require_bound(step.dim, f"the shape of parameter '{step.param.name}'")
            self.steps.append(step)
        self._require_bound(func.body, "the body")

    @property
    def shape_vars(self):
        """The variables bound from tensor shapes, in binding order."""
        return [s.dim for s in self.steps if s.action == "bind"]

    def _require_bound(self, node, where):
        missing = [v.name_hint for v in free_vars(node, include_buffer_shapes=False)
                   if v.dtype != "handle" and id(v) not in self.bound]
        if missing:
            raise ValueError(f"kernel '{self.name}': {where} uses {', '.join(sorted(missing))}, "
                             f"which no parameter or shape defines")

    def arity_message(self, got):
        """The error text for a call with ``got`` arguments."""
        names = ", ".join(p.name for p in self.params)
        return (f"{self.name}: expected {len(self.params)} arguments ({names}), "
                f"got {got}")
