"""PrimFunc: a TensorIR function (a kernel) over buffers and scalars."""
from rvm.ir.expr import BaseFunc
from rvm.tir.buffer import Buffer
from rvm.tir.expr import Var
from rvm.tir.stmt import Stmt


class PrimFunc(BaseFunc):
    """A kernel: ``params`` (handle Vars bound to Buffers through ``buffer_map``, or scalar
    Vars), a ``body`` statement and ``attrs`` (``global_symbol``, ``tir.noalias``, ...).

    Buffers may be passed directly as params: each is replaced by a fresh
    handle Var mapped to it, as the script form ``def f(A: T.Buffer(...))`` does.
    In TensorIR form the body is a BlockRealize of the block named "root".
    """

    _fields = ("params", "buffer_map", "ret_type", "body", "attrs")
    _binding_fields = ("params", "buffer_map")

    def __init__(self, params, body, ret_type=None, buffer_map=None, attrs=None, span=None):
        buffer_map = dict(buffer_map or {})
        handles = []
        for p in params:
            if isinstance(p, Buffer):
                var = Var(p.name, "handle")
                buffer_map[var] = p
                handles.append(var)
            elif isinstance(p, Var):
                handles.append(p)
            else:
                raise TypeError(f"PrimFunc params must be tir.Var or Buffer, got "
                                f"{type(p).__name__} {p!r}")
        for var in buffer_map:
            if not any(var is h for h in handles):
                raise ValueError(f"buffer_map key {var.name_hint!r} is not a parameter")
        if not isinstance(body, Stmt):
            raise TypeError(f"PrimFunc body must be a Stmt, got {type(body).__name__}")
        self.params = tuple(handles)
        # Parameter order, so that structural comparison pairs entries deterministically.
        self.buffer_map = {h: buffer_map[h] for h in handles if h in buffer_map}
        self.ret_type = ret_type
        self.body = body
        self.attrs = dict(attrs or {})
        self.span = span

    def with_body(self, body):
        """A copy with a new body."""
        return self.with_fields(body=body)

    def buffer_of(self, param):
        """The Buffer bound to parameter ``param`` (a Var or its name), or None."""
        for var, buf in self.buffer_map.items():
            if var is param or var.name_hint == param:
                return buf
        return None
