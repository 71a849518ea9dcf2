"""Shape functions: PrimFuncs that compute derived symbolic dimensions in the shape heap.

The VM keeps the symbolic dimensions of a call in a *shape heap*, an int64
tensor of slots. Dimensions such as ``n * 2`` or ``n // 4`` are computed by a
generated PrimFunc that reads the slots of ``n`` and writes the slot of the
result; it is compiled with the other kernels and called with the heap.
"""
from rvm.ir.base import structural_equal
from rvm.tir.free_vars import used_vars
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import Cast, IntImm
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import BufferStore, SeqStmt
from rvm.tir.stmt_functor import substitute


def tir_vars_of(expr):
    """The TIR variables of ``expr``, each once, in order of appearance."""
    return list(used_vars(expr).values())


class HeapLayout:
    """Slots of a shape heap: one per symbolic variable and one per derived expression."""

    def __init__(self):
        self.var_slots = {}
        self.exprs = []  # [(expr, slot)]
        self.size = 0

    def var_slot(self, var):
        """The slot of variable ``var`` (allocated on first request)."""
        slot = self.var_slots.get(id(var))
        if slot is None:
            slot = self.var_slots[id(var)] = self.size
            self.size += 1
        return slot

    def expr_slot(self, expr, allocate=True):
        """The slot of the derived expression ``expr`` (None if absent and not ``allocate``)."""
        for known, slot in self.exprs:
            if known is expr or structural_equal(known, expr, map_free_vars=False):
                return slot
        if not allocate:
            return None
        slot = self.size
        self.exprs.append((expr, slot))
        self.size += 1
        return slot


def make_shape_func(layout, exprs, name):
    """A PrimFunc ``name(H)`` storing each derived expression of ``exprs`` into its heap slot."""
    heap = decl_buffer((layout.size,), "int64", name="H")

    def load(var):
        slot = layout.var_slots.get(id(var))
        if slot is None:
            return None
        return heap[IntImm("int64", slot)]

    stores = []
    for expr in exprs:
        value = substitute(expr, load)
        if value.dtype != "int64":  # a condition (n <= 64) is kept as 0 or 1 in the heap
            value = Cast("int64", value)
        stores.append(BufferStore(heap, value, [IntImm("int64", layout.expr_slot(expr))]))
    body = stores[0] if len(stores) == 1 else SeqStmt(stores)
    return PrimFunc([heap], body, attrs={"global_symbol": name, "tir.noalias": True})
