"""What kind of computation a TensorIR kernel is, for operator fusion (``OpPatternKind``).

FuseOps decides what may share a kernel from these kinds, found by looking at
the index patterns of each block's single store and its loads:

- ``ELEMWISE``: every load reads at the store's indices (``C[i, j] = A[i, j] + B[j]``
  counts too: one elementwise operand makes a broadcast elementwise);
- ``BROADCAST``: loads read a subsequence of the store's indices (``C[i, j] = B[j]``);
- ``INJECTIVE``: loads use no loop variable but the store's index variables, in
  any form (transpose, reshape, concat, strided slice, gather);
- ``COMM_REDUCE``: a reduction over axes read directly (``sum``, ``max`` ...);
- ``OUT_EWISE_FUSABLE``: a reduction whose output can take an elementwise
  epilogue: a multiply-accumulate (matmul, dense, conv), a reduction over
  windows (pooling), or reductions followed by an output block (softmax, mean);
- ``OPAQUE``: anything else (no blocks, several stores, extern calls).

>>> from rvm.te.operation import compute, placeholder
>>> from rvm.te.create_prim_func import create_prim_func
>>> A = placeholder((4, 8), name="A")
>>> B = compute((8, 4), lambda i, j: A[j, i], name="B")
>>> analyze_op_pattern_kind(create_prim_func([A, B])).name
'INJECTIVE'
"""
import enum

from rvm.tir.free_vars import used_vars
from rvm.tir.expr import Add, BufferLoad, Cast, IntImm, IterVar, Mul, Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import Block, BlockRealize, BufferStore, For, LetStmt
from rvm.tir.stmt_functor import StmtExprVisitor, post_order_visit


class OpPatternKind(enum.IntEnum):
    """Fusion pattern of a kernel, ordered from the most to the least fusable (TVM's values)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_EWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


def _same(a, b):
    if a is b:
        return True
    return isinstance(a, IntImm) and isinstance(b, IntImm) and a.value == b.value


def _same_indices(lhs, rhs):
    return len(lhs) == len(rhs) and all(_same(a, b) for a, b in zip(lhs, rhs))


def _is_broadcast(store, load):
    """Load indices are store indices in order, skipping unit dimensions read at 0."""
    j = 0
    for dim, index in zip(load.buffer.shape, load.indices):
        if _same(dim, IntImm("int64", 1)) and _same(index, IntImm("int64", 0)):
            continue
        while j < len(store.indices) and not _same(store.indices[j], index):
            j += 1
        if j == len(store.indices):
            return False
    return True


def _store_vars(store):
    if not all(isinstance(i, Var) for i in store.indices):
        return None
    return {id(i) for i in store.indices}


def _is_injective(store, load, local_vars):
    """Load indices use no loop or block variable that the (plain-variable) store indices do
    not (symbolic dimensions, defined outside the loops, may appear)."""
    store_vars = _store_vars(store)
    if store_vars is None:
        return False
    return all(id(v) in store_vars or id(v) not in local_vars
               for index in load.indices for v in used_vars(index).values())


def _allows_reuse(store, load):
    """Some store index variable does not appear in the load (its value is reused)."""
    store_vars = _store_vars(store)
    if store_vars is None:
        return False
    for index in load.indices:
        for v in used_vars(index).values():
            store_vars.discard(id(v))
    return bool(store_vars)


def _strip_cast(expr):
    while isinstance(expr, Cast):
        expr = expr.value
    return expr


def _is_multiply_accumulate(body):
    """``C[i, j] = C[i, j] + A[..] * B[..]`` where both A and B are reused across C."""
    if not isinstance(body, BufferStore):
        return False
    add = _strip_cast(body.value)
    if not isinstance(add, Add):
        return False
    acc, mul = _strip_cast(add.a), _strip_cast(add.b)
    if not isinstance(mul, Mul) or not isinstance(acc, BufferLoad):
        return False
    if acc.buffer is not body.buffer or not _same_indices(acc.indices, body.indices):
        return False
    lhs, rhs = _strip_cast(mul.a), _strip_cast(mul.b)
    if not isinstance(lhs, BufferLoad) or not isinstance(rhs, BufferLoad):
        return False
    return _allows_reuse(body, lhs) and _allows_reuse(body, rhs)


def _is_pure_reduce(reduce_vars, indices):
    """Every index that uses a reduction variable is exactly that variable."""
    for index in indices:
        used = [v for v in used_vars(index).values() if id(v) in reduce_vars]
        if used and not (isinstance(index, Var) and id(index) in reduce_vars):
            return False
    return True


def _local_vars(body):
    """The ids of the variables defined inside ``body``: loop, let and block variables."""
    found = set()

    def visit(node):
        if isinstance(node, (For, LetStmt)):
            found.add(id(node.loop_var if isinstance(node, For) else node.var))
        elif isinstance(node, Block):
            found.update(id(iv.var) for iv in node.iter_vars)

    post_order_visit(body, visit)
    return found


class _PatternAnalyzer(StmtExprVisitor):
    def __init__(self, func):
        self.param_buffers = {id(b) for b in func.buffer_map.values()}
        self.local_vars = _local_vars(func.body)
        self.kind = OpPatternKind.ELEMWISE
        self.blocks = 0
        self.store = None
        self.loads = []
        self.in_block = False

    def visit_buffer_store_(self, op):
        if not self.in_block:
            self.kind = OpPatternKind.OPAQUE  # a store outside any block
            return
        if self.store is not None and not _same_indices(op.indices, self.store.indices):
            self.kind = OpPatternKind.OPAQUE
            return
        self.store = op
        super().visit_buffer_store_(op)

    def visit_buffer_load_(self, op):
        self.loads.append(op)
        super().visit_buffer_load_(op)

    def visit_block_(self, op):
        if op.name_hint == "root":
            self.visit_stmt(op.body)
            return
        if self.in_block:  # blocks nested in blocks are not analyzed
            self.kind = OpPatternKind.OPAQUE
            return
        self.blocks += 1
        self.loads, self.store, self.in_block = [], None, True
        self.visit_stmt(op.body)
        self.in_block = False
        if self.kind == OpPatternKind.OPAQUE:
            return
        if self.store is None:
            self.kind = OpPatternKind.OPAQUE
            return
        self.kind = self._block_kind(op)

    def _block_kind(self, block):
        store = self.store
        pattern, has_elemwise = OpPatternKind.ELEMWISE, False
        for load in self.loads:
            if _same_indices(store.indices, load.indices):
                has_elemwise = True
            elif _is_broadcast(store, load):
                pattern = max(pattern, OpPatternKind.BROADCAST)
            elif _is_injective(store, load, self.local_vars):
                pattern = max(pattern, OpPatternKind.INJECTIVE)
            else:
                pattern = OpPatternKind.OPAQUE
                break
        if pattern == OpPatternKind.BROADCAST and has_elemwise:
            pattern = OpPatternKind.ELEMWISE
        if pattern != OpPatternKind.OPAQUE:
            writes_param = any(id(w.buffer) in self.param_buffers for w in block.writes)
            if writes_param and self.kind == OpPatternKind.COMM_REDUCE:
                return OpPatternKind.OUT_EWISE_FUSABLE  # reductions, then an output block
            return max(self.kind, pattern)
        reduce_vars = {id(iv.var) for iv in block.iter_vars if iv.iter_type == IterVar.CommReduce}
        if not reduce_vars:
            return OpPatternKind.OPAQUE
        if _is_multiply_accumulate(block.body):
            return max(self.kind, OpPatternKind.OUT_EWISE_FUSABLE)
        if not all(_is_pure_reduce(reduce_vars, load.indices) for load in self.loads):
            return max(self.kind, OpPatternKind.OUT_EWISE_FUSABLE)  # windows: pooling
        return max(self.kind, OpPatternKind.COMM_REDUCE)


def analyze_op_pattern_kind(func):
    """The OpPatternKind of the PrimFunc ``func`` (module docstring)."""
    if not isinstance(func, PrimFunc):
        raise TypeError(f"analyze_op_pattern_kind expects a tir.PrimFunc, got "
                        f"{type(func).__name__}")
    if not isinstance(func.body, BlockRealize):
        return OpPatternKind.OPAQUE  # not in TensorIR form: no blocks to reason about
    analyzer = _PatternAnalyzer(func)
    analyzer.visit_stmt(func.body)
    if analyzer.blocks == 0:
        return OpPatternKind.OPAQUE
    return analyzer.kind
