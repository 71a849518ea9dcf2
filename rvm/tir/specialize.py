"""PrimFunc.specialize: a kernel with some of its symbolic parameters or dimensions fixed.

``func.specialize({n: 450})`` replaces the variable ``n`` (a scalar parameter
or a symbolic dimension of a buffer parameter) by 450 everywhere: buffer
shapes, loop extents, block domains. ``func.specialize({a: decl_buffer((450,
64))})`` gives the buffer parameter bound to handle ``a`` that buffer's shape,
fixing the variables its dimensions were. Specialized scalar parameters are
removed from the signature, as in TVM.

>>> from rvm.tir.buffer import decl_buffer
>>> from rvm.tir.expr import Var
>>> from rvm.tir.stmt import Evaluate
>>> n = Var("n", "int64")
>>> f = PrimFunc([decl_buffer((n, 4), "float32", "X")], Evaluate(0))
>>> g = f.specialize({n: 450})
>>> [int(d) for d in g.buffer_map[g.params[0]].shape]
[450, 4]
"""
from rvm.ir.expr import PrimExpr
from rvm.tir import op as _op
from rvm.tir.buffer import Buffer
from rvm.tir.expr import IntImm, Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt_functor import StmtExprMutator


def _bind_buffer(var_map, old, new, who):
    if len(old.shape) != len(new.shape):
        raise ValueError(f"specialize: buffer '{old.name}' has {len(old.shape)} dimensions, "
                         f"the new buffer {len(new.shape)}")
    if old.dtype != new.dtype:
        raise ValueError(f"specialize: buffer '{old.name}' is {old.dtype}, the new buffer "
                         f"{new.dtype}")
    for axis, (a, b) in enumerate(zip(old.shape, new.shape)):
        if isinstance(a, Var):
            var_map[id(a)] = _op.convert(b, a.dtype)
        elif isinstance(a, IntImm) and isinstance(b, IntImm) and a.value != b.value:
            raise ValueError(f"specialize: {who} dimension {axis} is {a.value}, the new buffer "
                             f"has {b.value}")


class _Specializer(StmtExprMutator):
    """Replaces mapped variables in expressions and in the buffers that use them."""

    def __init__(self, var_map):
        self.var_map = var_map
        self.buffers = {}

    def visit_var_(self, op):
        return self.var_map.get(id(op), op)

    visit_size_var_ = visit_var_

    def visit_buffer(self, buffer):
        new = self.buffers.get(id(buffer))
        if new is None:
            changes = {}
            for name in ("shape", "strides"):
                old = tuple(getattr(buffer, name))
                values = tuple(self.visit_expr(d) if isinstance(d, PrimExpr) else d for d in old)
                if any(a is not b for a, b in zip(values, old)):
                    changes[name] = values
            if isinstance(buffer.elem_offset, PrimExpr):
                offset = self.visit_expr(buffer.elem_offset)
                if offset is not buffer.elem_offset:
                    changes["elem_offset"] = offset
            new = buffer.with_fields(**changes) if changes else buffer
            self.buffers[id(buffer)] = new
        return new


def _buffer_of(func, var):
    for param, buf in func.buffer_map.items():
        if param is var:
            return buf
    return None


def specialize(func, param_map):
    """``func`` with the variables and buffer parameters of ``param_map`` fixed."""
    if not isinstance(param_map, dict):
        raise TypeError(f"specialize expects a dict, got {type(param_map).__name__}")
    var_map = {}
    params = {id(p): p for p in func.params}
    for key, value in param_map.items():
        if isinstance(key, str):
            key = next((p for p in func.params if p.name_hint == key), key)
        if isinstance(value, Buffer):
            buf = _buffer_of(func, key)
            if buf is None:
                raise ValueError(f"specialize: {key!r} is not a buffer parameter of the "
                                 f"function; it has {[p.name_hint for p in func.params]}")
            _bind_buffer(var_map, buf, value, f"buffer '{buf.name}'")
        elif isinstance(key, Var):
            if id(key) in params and _buffer_of(func, key) is not None:
                raise ValueError(f"specialize: parameter '{key.name_hint}' is a buffer; map it "
                                 "to a Buffer")
            var_map[id(key)] = _op.convert(value, key.dtype)
        else:
            raise TypeError(f"specialize: keys are parameters or shape variables (tir.Var), "
                            f"got {type(key).__name__} {key!r}")
    mutator = _Specializer(var_map)
    new_params = [p for p in func.params if id(p) not in var_map]
    buffer_map = {p: mutator.visit_buffer(_buffer_of(func, p)) for p in new_params
                  if _buffer_of(func, p) is not None}
    body = mutator.visit(func.body)
    return PrimFunc(new_params, body, func.ret_type, buffer_map, func.attrs, func.span)
