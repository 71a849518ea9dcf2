"""Well-formedness of PrimFuncs: variables and buffers defined before use, defined once,
and blocks that only see their own axes."""
from rvm.ir.module import IRModule
from rvm.tir.free_vars import used_vars
from rvm.tir.expr import Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt_functor import StmtExprVisitor


class _WellFormed(StmtExprVisitor):
    def __init__(self, func_name):
        self.func_name = func_name
        self.scopes = [set()]      # visible variable ids, innermost last
        self.bound_once = set()    # ids of variables bound by some definition so far
        self.buffers = [set()]     # visible buffer ids
        self.problems = []

    def problem(self, text):
        self.problems.append(f"{self.func_name}: {text}")

    def visible(self, var):
        return any(id(var) in scope for scope in self.scopes)

    def define(self, var, where):
        if id(var) in self.bound_once:
            self.problem(f"variable {var.name_hint!r} is defined more than once "
                         f"(again by {where}); expected each variable bound once")
        self.bound_once.add(id(var))
        self.scopes[-1].add(id(var))

    def declare_buffer(self, buf):
        self.buffers[-1].add(id(buf))
        self.scopes[-1].add(id(buf.data))

    def push(self, opaque=True):
        """Opens a scope; a non-opaque block hides the enclosing loop variables."""
        self.scopes.append(set() if opaque else {"hide"})
        self.buffers.append(set())

    def pop(self):
        self.scopes.pop()
        self.buffers.pop()

    def visit_var_(self, op):
        if not self._visible_from_here(op):
            self.problem(f"variable {op.name_hint!r} is used where it is not defined")

    def _visible_from_here(self, var):
        for scope in reversed(self.scopes):
            if id(var) in scope:
                return True
            if "hide" in scope:
                # Inside a block with axes only function-level variables stay visible.
                return id(var) in self.scopes[0]
        return False

    def _check_buffer(self, buf, how):
        if not any(id(buf) in scope for scope in self.buffers):
            self.problem(f"buffer {buf.name!r} is {how} but not declared (expected a "
                         "parameter buffer, an alloc_buffer or a match_buffer)")

    def visit_buffer_load_(self, op):
        self._check_buffer(op.buffer, "read")
        super().visit_buffer_load_(op)

    def visit_buffer_store_(self, op):
        self._check_buffer(op.buffer, "written")
        super().visit_buffer_store_(op)

    def visit_for_(self, op):
        self.visit_expr(op.min)
        self.visit_expr(op.extent)
        self.push()
        self.define(op.loop_var, "a loop")
        self.visit_stmt(op.body)
        self.pop()

    def visit_let_stmt_(self, op):
        self.visit_expr(op.value)
        self.push()
        self.define(op.var, "a let")
        self.visit_stmt(op.body)
        self.pop()

    def visit_block_realize_(self, op):
        for value in op.iter_values:
            self.visit_expr(value)
        self.visit_expr(op.predicate)
        own = {id(iv.var) for iv in op.block.iter_vars}
        for value in op.iter_values:
            for var in used_vars(value).values():
                if id(var) in own:
                    self.problem(f"block {op.block.name_hint!r}: binding value uses the block's "
                                 f"own axis {var.name_hint!r}")
        self.visit_stmt(op.block)

    def visit_block_(self, op):
        for iv in op.iter_vars:
            self.visit_expr(iv.dom.min)
            self.visit_expr(iv.dom.extent)
        self.push(opaque=not op.iter_vars)
        for iv in op.iter_vars:
            self.define(iv.var, f"block {op.name_hint!r}")
        for buf in op.alloc_buffers:
            self.declare_buffer(buf)
        for match in op.match_buffers:
            self._check_buffer(match.source.buffer, "matched")
            self.declare_buffer(match.buffer)
        for region in op.reads + op.writes:
            self._check_buffer(region.buffer, "accessed")
            for rng in region.region:
                self.visit_expr(rng.min)
                self.visit_expr(rng.extent)
        if op.init is not None:
            self.visit_stmt(op.init)
        self.visit_stmt(op.body)
        self.pop()

    def visit_allocate_(self, op):
        for extent in op.extents:
            self.visit_expr(extent)
        self.push()
        self.define(op.buffer_var, "an allocate")
        self.visit_stmt(op.body)
        self.pop()

    def visit_decl_buffer_(self, op):
        self.push()
        self.declare_buffer(op.buffer)
        self.visit_stmt(op.body)
        self.pop()


def verify_well_formed(func, assert_mode=True):
    """Checks a PrimFunc (or every PrimFunc of an IRModule).

    Every used variable must be defined (parameter, buffer shape, loop, let,
    block axis) and defined once; inside a block with axes the enclosing loop
    variables are reachable only through the block's bindings; every accessed
    buffer must be declared. Raises ValueError listing the problems (or returns
    False when ``assert_mode`` is off); returns True when well formed.
    """
    funcs = [(gv.name_hint, f) for gv, f in func.functions.items()] \
        if isinstance(func, IRModule) else [(func.attrs.get("global_symbol", "main"), func)]
    problems = []
    for name, f in funcs:
        if not isinstance(f, PrimFunc):
            continue
        checker = _WellFormed(name)
        for param in f.params:
            checker.define(param, "a parameter")
        for buf in f.buffer_map.values():
            checker.declare_buffer(buf)
            for dim in buf.shape + buf.strides + (buf.elem_offset,):
                if isinstance(dim, Var) and not checker.visible(dim):
                    checker.define(dim, "a buffer shape")
        for buf in f.buffer_map.values():
            for dim in buf.shape + buf.strides + (buf.elem_offset,):
                checker.visit_expr(dim)
        checker.visit_stmt(f.body)
        problems.extend(checker.problems)
    if problems:
        if assert_mode:
            raise ValueError("ill-formed TIR:\n  " + "\n  ".join(problems))
        return False
    return True
