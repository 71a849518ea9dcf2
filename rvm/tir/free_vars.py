"""The variables a TIR node uses: all of them (``used_vars``), or those it does not define
(``free_vars``)."""
from rvm.tir.expr import Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt_functor import StmtExprVisitor


class _UsedVars(StmtExprVisitor):
    def __init__(self):
        self.found = {}

    def visit_var_(self, op):
        self.found.setdefault(id(op), op)


class _FreeVars(StmtExprVisitor):
    """Collects used variables minus those bound inside (loops, lets, block axes)."""

    def __init__(self, include_buffer_shapes):
        self.defined = set()
        self.used = []
        self.seen = set()
        self.include_buffer_shapes = include_buffer_shapes
        self.buffers_seen = set()

    def define(self, var):
        self.defined.add(id(var))

    def visit_var_(self, op):
        if id(op) not in self.defined and id(op) not in self.seen:
            self.seen.add(id(op))
            self.used.append(op)

    def visit_buffer(self, buffer):
        if id(buffer) in self.buffers_seen:
            return
        self.buffers_seen.add(id(buffer))
        self.visit_var_(buffer.data)
        if self.include_buffer_shapes:
            for value in buffer.shape + buffer.strides + (buffer.elem_offset,):
                self.visit_expr(value)

    def visit_for_(self, op):
        self.define(op.loop_var)
        super().visit_for_(op)

    def visit_let_stmt_(self, op):
        self.visit_expr(op.value)
        self.define(op.var)
        self.visit_stmt(op.body)

    def visit_let_(self, op):
        self.visit_expr(op.value)
        self.define(op.var)
        self.visit_expr(op.body)

    def visit_allocate_(self, op):
        self.define(op.buffer_var)
        super().visit_allocate_(op)

    def visit_block_(self, op):
        for iv in op.iter_vars:
            self.define(iv.var)
        for buf in op.alloc_buffers:
            self.define(buf.data)
        for match in op.match_buffers:
            self.define(match.buffer.data)
        super().visit_block_(op)

    def visit_decl_buffer_(self, op):
        self.define(op.buffer.data)
        super().visit_decl_buffer_(op)

    def visit_iter_var_(self, op):
        self.define(op.var)
        super().visit_iter_var_(op)

    def visit_prim_func_(self, op):
        for param in op.params:
            self.define(param)
        for buf in op.buffer_map.values():
            self.define(buf.data)
            for dim in buf.shape + buf.strides + (buf.elem_offset,):
                if isinstance(dim, Var):
                    self.define(dim)
        for buf in op.buffer_map.values():
            self.visit_buffer(buf)
        self.visit_stmt(op.body)


def used_vars(node):
    """{id(var): var} for every variable that ``node`` (an expression, a statement or a list of
    them) uses, bound inside or not, in order of first use.

    >>> from rvm.tir.expr import Var
    >>> i, n = Var("i"), Var("n")
    >>> [v.name_hint for v in used_vars([i * n, n + i]).values()]
    ['i', 'n']
    """
    collector = _UsedVars()
    collector.visit(node)
    return collector.found


def free_vars(node, include_buffer_shapes=True):
    """Variables used in ``node`` and not defined inside it, in order of first use.

    Buffers contribute their data variable and (by default) the variables of their shapes.

    >>> from rvm.tir.expr import Var
    >>> i, n = Var("i"), Var("n")
    >>> [v.name_hint for v in free_vars(i * n + 1)]
    ['i', 'n']
    """
    collector = _FreeVars(include_buffer_shapes)
    if isinstance(node, PrimFunc):
        collector.visit_prim_func_(node)
    else:
        collector.visit(node)
    return collector.used


def undefined_vars(func):
    """The variables a PrimFunc uses without defining them (empty for a valid function)."""
    return free_vars(func)
