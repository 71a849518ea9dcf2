"""ScheduleState: the module being scheduled and stable references to its blocks and loops.

IR nodes are immutable, so every primitive builds new statements and the
state swaps them into the function (``replace``). A ``StmtSRef`` is the
stable reference to one block or loop across those swaps: after a
replacement a loop keeps its sref while its loop variable survives, a block
while it is the same Block object or a primitive says which new Block
replaces it (``block_reuse``). Srefs of statements that disappeared are
invalidated (their ``stmt`` becomes None).
"""
from rvm.ir.module import IRModule
from rvm.tir.expr import IntImm
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import Block, BlockRealize, Evaluate, For, SeqStmt, Stmt, stmt_seq
from rvm.tir.stmt_functor import StmtMutator


class StmtSRef:
    """A stable reference to a Block or For: ``stmt``, ``parent`` sref, position ``seq_index``
    in the parent's statement sequence (-1 when not in a sequence), and for blocks the
    BlockRealize that runs them (``realize``)."""

    __slots__ = ("stmt", "parent", "seq_index", "realize", "func_name")

    def __init__(self, stmt, parent, seq_index, func_name):
        self.stmt = stmt
        self.parent = parent
        self.seq_index = seq_index
        self.realize = None
        self.func_name = func_name

    @property
    def is_block(self):
        return isinstance(self.stmt, Block)

    @property
    def is_loop(self):
        return isinstance(self.stmt, For)

    def ancestors(self):
        """Parent srefs from the innermost outwards."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def __repr__(self):
        if self.stmt is None:
            return "StmtSRef(<removed>)"
        if self.is_block:
            return f"StmtSRef(block {self.stmt.name_hint!r})"
        return f"StmtSRef(loop {self.stmt.loop_var.name_hint!r})"


def describe(sref):
    """``block "C"`` / ``loop j``: how error messages name a block or loop."""
    if sref.is_block:
        return f'block "{sref.stmt.name_hint}"'
    return f"loop {sref.stmt.loop_var.name_hint}"


REMOVE = object()  # a replacement value: delete the statement


class _Replacer(StmtMutator):
    """Swaps statements found by identity; REMOVE deletes them (and loops left empty)."""

    def __init__(self, table):
        self.table = table  # id(old) -> (old, new)
        self.rebuilt = {}   # old Block -> new Block, for blocks rebuilt around replacements

    def visit_stmt(self, stmt):
        hit = self.table.get(id(stmt))
        if hit is not None and hit[0] is stmt:
            return hit[1]
        return super().visit_stmt(stmt)

    def visit_expr(self, expr):
        return expr

    def visit_seq_stmt_(self, op):
        items = [self.visit_stmt(s) for s in op.seq]
        if all(a is b for a, b in zip(items, op.seq)):
            return op
        kept = [s for s in items if s is not REMOVE]
        if not kept:
            return REMOVE
        return stmt_seq(*kept)

    def visit_for_(self, op):
        body = self.visit_stmt(op.body)
        if body is REMOVE:
            return REMOVE
        return op if body is op.body else op.with_fields(body=body)

    def visit_block_realize_(self, op):
        block = self.visit_stmt(op.block)
        if block is REMOVE:
            return REMOVE
        return op if block is op.block else op.with_fields(block=block)

    def visit_block_(self, op):
        body = self.visit_stmt(op.body)
        if body is REMOVE:
            body = Evaluate(IntImm("int32", 0))
        init = op.init if op.init is None else self.visit_stmt(op.init)
        if body is op.body and init is op.init:
            return op
        new = op.with_fields(body=body, init=init)
        self.rebuilt[op] = new
        return new

    def _generic(self, node):
        out = super()._generic(node)
        if isinstance(out, Stmt) and any(getattr(out, f, None) is REMOVE for f in out._fields):
            return REMOVE
        return out


def replace_stmts(root, table, rebuilt=None):
    """``root`` with each statement ``old`` of ``table`` ({old: new}) replaced by ``new``
    (REMOVE deletes it). Unchanged subtrees are kept as they are; blocks rebuilt around
    the replacements are recorded in ``rebuilt`` ({old Block: new Block}) when given."""
    by_id = {id(old): (old, new) for old, new in table.items()}
    replacer = _Replacer(by_id)
    out = replacer.visit_stmt(root)
    if rebuilt is not None:
        rebuilt.update(replacer.rebuilt)
    return Evaluate(IntImm("int32", 0)) if out is REMOVE else out


class ScheduleState:
    """The scheduled IRModule and the srefs of every block and loop of its PrimFuncs."""

    def __init__(self, mod):
        self.mod = IRModule(dict(mod.functions), mod.attrs)
        self._loops = {}   # id(loop_var) -> sref
        self._blocks = {}  # id(block) -> sref
        self.roots = {}    # func name -> root block sref
        for gv, func in self.mod.functions.items():
            if isinstance(func, PrimFunc):
                self._index(gv.name_hint, func.body, {})

    # -- queries -----------------------------------------------------------------------
    def func(self, name):
        """The current PrimFunc named ``name``."""
        return self.mod[name]

    def block_sref(self, block):
        """The sref of a Block of the current module (None if it is not in the module)."""
        sref = self._blocks.get(id(block))
        return sref if sref is not None and sref.stmt is block else None

    def loop_sref(self, loop):
        """The sref of a For of the current module (None if it is not in the module)."""
        sref = self._loops.get(id(loop.loop_var))
        return sref if sref is not None and sref.stmt is loop else None

    def srefs_of(self, func_name):
        """Every block and loop sref of function ``func_name``, in pre-order."""
        out = []

        def walk(stmt):
            for child in _children(stmt):
                sref = self.sref_of_stmt(child)
                if sref is not None:
                    out.append(sref)
                walk(child)

        root = self.roots[func_name]
        out.append(root)
        walk(root.stmt)
        return out

    def sref_of_stmt(self, stmt):
        """The sref of a For or Block (a BlockRealize gives its block's), else None."""
        if isinstance(stmt, For):
            return self.loop_sref(stmt)
        if isinstance(stmt, BlockRealize):
            return self.block_sref(stmt.block)
        if isinstance(stmt, Block):
            return self.block_sref(stmt)
        return None

    # -- updates -----------------------------------------------------------------------
    def replace(self, func_name, table, block_reuse=None, buffer_map=None):
        """Applies ``table`` ({old statement: new statement or REMOVE}) to the body of
        ``func_name`` and re-indexes its srefs. ``block_reuse`` ({old Block: new Block})
        keeps block srefs (and the handles pointing at them) across the change;
        ``buffer_map`` replaces the function's parameter buffers."""
        func = self.mod[func_name]
        reuse = {}
        body = replace_stmts(func.body, table, reuse) if table else func.body
        reuse.update(block_reuse or {})
        changes = {"body": body}
        if buffer_map is not None:
            changes["buffer_map"] = buffer_map
        new_func = func.with_fields(**changes)
        self.mod = self.mod.copy()
        self.mod.update_func(func_name, new_func)
        self._index(func_name, body, reuse)
        return new_func

    def _index(self, func_name, body, block_reuse):
        reuse = {id(new): self._blocks.get(id(old)) for old, new in block_reuse.items()}
        seen = set()
        new_loops, new_blocks = {}, {}

        def visit(stmt, parent, seq_index):
            sref = None
            if isinstance(stmt, For):
                sref = self._loops.get(id(stmt.loop_var))
                if sref is None or sref.func_name != func_name:
                    sref = StmtSRef(stmt, parent, seq_index, func_name)
                new_loops[id(stmt.loop_var)] = sref
            elif isinstance(stmt, BlockRealize):
                block = stmt.block
                sref = reuse.get(id(block))
                if sref is None:
                    sref = self._blocks.get(id(block))
                    if sref is not None and sref.stmt is not block:
                        sref = None
                if sref is None or id(sref) in seen:
                    sref = StmtSRef(block, parent, seq_index, func_name)
                new_blocks[id(block)] = sref
            if sref is not None:
                seen.add(id(sref))
                sref.stmt = stmt.block if isinstance(stmt, BlockRealize) else stmt
                sref.parent, sref.seq_index = parent, seq_index
                if isinstance(stmt, BlockRealize):
                    sref.realize = stmt
                parent = sref
            if isinstance(stmt, SeqStmt):
                for k, child in enumerate(stmt.seq):
                    visit(child, parent, k)
            else:
                for child in _children(stmt):
                    visit(child, parent, -1)

        if not isinstance(body, BlockRealize):
            raise ValueError(f"function '{func_name}' is not in TensorIR form: its body must be "
                             "the root block (write it with T.block, or build it with "
                             "te.create_prim_func)")
        visit(body, None, -1)
        for table, fresh in ((self._loops, new_loops), (self._blocks, new_blocks)):
            for key, sref in list(table.items()):
                if sref.func_name == func_name:
                    del table[key]
                    if id(sref) not in seen:
                        sref.stmt = sref.parent = sref.realize = None
            table.update(fresh)
        self.roots[func_name] = new_blocks[id(body.block)]


def _children(stmt):
    """The statements directly under ``stmt`` (a block's init is not scheduled)."""
    if isinstance(stmt, SeqStmt):
        return stmt.seq
    if isinstance(stmt, BlockRealize):
        return (stmt.block.body,)
    if isinstance(stmt, Block):
        return (stmt.body,)
    return tuple(getattr(stmt, f) for f in stmt._fields
                 if isinstance(getattr(stmt, f), Stmt))


def children_of(stmt):
    """The statements directly under a For, Block, BlockRealize or SeqStmt."""
    return _children(stmt)
