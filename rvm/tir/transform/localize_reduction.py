"""LocalizeReduction: reductions accumulate in a local scalar instead of the output buffer.

When the innermost loops of a nest are the reduction loops of a block with
``T.init`` (their variables feed only the block's reduction axes, and the
output index does not depend on them), the reduction is decomposed around
those loops: the accumulator starts at the init value, the loops update it,
and the result is stored once. The C compiler can then keep the accumulator
in a register and vectorize the reduction loop, which the pass marks with
``"rvm.simd_reduction": (op, accumulator data var)`` for a recognised
combiner (``+``, ``*``, ``max``, ``min``) when the loop reads memory with unit
stride (vectorizing a strided reduction needs gathers, which are slower).

    for i, j, k in T.grid(n, m, l):               for i, j in T.grid(n, m):
        with T.block("C"):                            acc = T.alloc_buffer((1,), scope="local")
            vi, vj, vk = T.axis.remap("SSR", ..)      acc[0] = 0.0
            with T.init():                  ->        for k in range(l):  # simd reduction(+)
                C[vi, vj] = 0.0                           acc[0] = acc[0] + A[i, k] * B[k, j]
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
                                                      C[i, j] = acc[0]

Nests where this is not provably equivalent (the output element revisited
by an outer loop, a block predicate, other reads of the output) are left as
they are; LowerInitBlock then guards their init.
"""
from rvm.ir.base import structural_equal
from rvm.tir import op as _op
from rvm.tir.free_vars import used_vars
from rvm.tir.analysis.index_eval import is_injective_on_grid
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import Add, BufferLoad, Cast, IntImm, IterVar, Max, Min, Mul, Sub, Var
from rvm.tir.stmt import Allocate, BlockRealize, BufferStore, DeclBuffer, For, ForKind, stmt_seq
from rvm.tir.stmt_functor import (
    StmtExprMutator, StmtExprVisitor, StmtMutator, post_order_visit, substitute,
)
from rvm.tir.transform.prim_func_pass import prim_func_pass

SIMD_REDUCTION = "rvm.simd_reduction"
_COMBINERS = {Add: "+", Mul: "*", Max: "max", Min: "min"}


def _loads_of(expr, buffer):
    loads = []

    class _Loads(StmtExprVisitor):
        def visit_buffer_load_(self, op):
            if op.buffer.data is buffer.data:
                loads.append(op)
            super().visit_buffer_load_(op)

    _Loads().visit(expr)
    return loads


def _has_load(exprs):
    found = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def _linear_terms(expr):
    """{id(var): (var, coeff)} and a constant for sums of constant multiples of vars, else None."""
    if isinstance(expr, IntImm):
        return {}, expr.value
    if isinstance(expr, Var):
        return {id(expr): (expr, 1)}, 0
    if isinstance(expr, Cast) and (expr.dtype.is_int and expr.value.dtype.is_int):
        return _linear_terms(expr.value)
    if isinstance(expr, (Add, Sub)):
        a, b = _linear_terms(expr.a), _linear_terms(expr.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(expr, Add) else -1
        terms = dict(a[0])
        for key, (var, coeff) in b[0].items():
            old = terms.get(key, (var, 0))[1]
            terms[key] = (var, old + sign * coeff)
        return terms, a[1] + sign * b[1]
    if isinstance(expr, Mul):
        for x, y in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(y, IntImm):
                inner = _linear_terms(x)
                if inner is None:
                    return None
                return {k: (v, c * y.value) for k, (v, c) in inner[0].items()}, inner[1] * y.value
    return None


def _visits_each_point_once(values, loops):
    """Whether distinct iterations of ``loops`` give distinct tuples of ``values``: proven
    symbolically (a mixed radix), else by evaluating them on every iteration (constant loops,
    such as those fuse and split make)."""
    if _is_mixed_radix(values, loops):
        return True
    if all(isinstance(f.extent, IntImm) and isinstance(f.min, IntImm) and f.min.value == 0
           for f in loops):
        return bool(is_injective_on_grid(values, [(f.loop_var, f.extent.value) for f in loops]))
    return False


def _is_mixed_radix(values, loops):
    """A sufficient condition for ``_visits_each_point_once``: every loop variable (but
    those of one-iteration loops) appears in exactly one value, and within a value the
    terms form a mixed radix (each coefficient at least the span of the smaller terms).
    """
    extents = {id(f.loop_var): f.extent for f in loops}
    used = set()
    for value in values:
        lin = _linear_terms(value)
        if lin is None:
            return False
        terms = sorted((abs(c), id(v)) for v, c in lin[0].values() if c != 0)
        span = 1
        for k, (coeff, key) in enumerate(terms):
            if key not in extents or key in used or coeff < span:
                return False
            used.add(key)
            if k + 1 < len(terms):
                extent = extents[key]
                if not isinstance(extent, IntImm):
                    return False
                span = coeff * extent.value
    single = {id(f.loop_var) for f in loops
              if isinstance(f.extent, IntImm) and f.extent.value == 1}
    return used | single == set(extents)


def _coefficient(expr, var):
    lin = _linear_terms(expr)
    if lin is None:
        return None
    return lin[0].get(id(var), (var, 0))[1]


def _unit_stride(value, out, realize, loop_var):
    """Whether every load in ``value`` reads consecutive elements (or one element) as
    ``loop_var`` advances; strided reductions are left to the compiler's cost model."""
    steps = {}
    for iv, bound in zip(realize.block.iter_vars, realize.iter_values):
        coeff = _coefficient(bound, loop_var)
        if coeff != 0:
            steps[id(iv.var)] = (iv.var, coeff)
    loads = []
    post_order_visit(value, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    for load in loads:
        if load.buffer.data is out.data:
            continue
        for position, index in enumerate(load.indices):
            stride = 0
            for var, coeff in steps.values():
                c = _coefficient(index, var)
                if c is None or coeff is None:
                    return False
                stride += c * coeff
            if stride != 0 and (position != len(load.indices) - 1 or stride != 1):
                return False
    return True


def _combiner(value, load):
    """The reduction operator of ``out = op(out, x)`` (either order), else None."""
    op = _COMBINERS.get(type(value))
    if op is None:
        return None
    for mine, other in ((value.a, value.b), (value.b, value.a)):
        if mine is load and not _loads_of(other, load.buffer):
            return op
    return None


class _Localizer(StmtMutator):
    def __init__(self):
        self.enclosing = []

    def visit_for_(self, op):
        loops = [op]
        body = op.body
        while isinstance(body, For):
            loops.append(body)
            body = body.body
        if isinstance(body, BlockRealize) and body.block.init is not None:
            rewritten = self._localize(loops, body)
            if rewritten is not None:
                return rewritten
        self.enclosing.append(op)
        try:
            return self._generic(op)
        finally:
            self.enclosing.pop()

    def _localize(self, loops, realize):
        block = realize.block
        init, update = block.init, block.body
        if not (isinstance(init, BufferStore) and isinstance(update, BufferStore)):
            return None
        if _has_load(list(init.indices) + list(update.indices)):
            return None  # indirect output indices: leave the reduction as it is
        out = update.buffer
        if init.buffer.data is not out.data or _loads_of(init.value, out):
            return None
        if not all(structural_equal(a, b, map_free_vars=False)
                   for a, b in zip(init.indices, update.indices)):
            return None
        if not (isinstance(realize.predicate, IntImm) and realize.predicate.value):
            return None
        loads = _loads_of(update.value, out)
        if not all(all(structural_equal(a, b, map_free_vars=False)
                       for a, b in zip(ld.indices, update.indices)) for ld in loads):
            return None
        spatial, reduce = [], []
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type == IterVar.DataPar:
                spatial.append((iv, value))
            elif iv.iter_type == IterVar.CommReduce:
                reduce.append((iv, value))
            else:
                return None
        reduce_ids = {id(iv.var) for iv, _ in reduce}
        if not reduce or set(used_vars(list(update.indices) + [init.value])) & reduce_ids:
            return None
        spatial_vars = used_vars([v for _, v in spatial])
        split = 0
        for k, loop in enumerate(loops):
            if id(loop.loop_var) in spatial_vars:
                split = k + 1
        inner = loops[split:]
        inner_ids = {id(f.loop_var) for f in inner}
        if not inner or not set(used_vars([v for _, v in reduce])) <= inner_ids:
            return None
        if not _visits_each_point_once([v for _, v in spatial], self.enclosing + loops[:split]):
            return None
        return self._rewrite(loops, split, realize, spatial, loads)

    def _rewrite(self, loops, split, realize, spatial, loads):
        block = realize.block
        init, update = block.init, block.body
        out = update.buffer
        acc = decl_buffer((1,), out.dtype, name=f"{out.name}_local", scope="local")
        zero = (_op.const(0, "int32"),)
        acc_load = BufferLoad(acc, zero)
        load_ids = {id(ld) for ld in loads}

        class _ToAcc(StmtExprMutator):
            def visit_buffer_load_(self, op):
                return acc_load if id(op) in load_ids else self._generic(op)

        combiner = _combiner(update.value, loads[0]) if len(loads) == 1 else None
        new_block = block.with_fields(init=None, body=BufferStore(acc, _ToAcc().visit(update.value),
                                                                  zero))
        body = realize.with_fields(block=new_block)
        for k, loop in reversed(list(enumerate(loops[split:]))):
            annotations = dict(loop.annotations)
            if k == len(loops) - split - 1 and combiner and loop.kind == ForKind.SERIAL \
                    and _unit_stride(update.value, out, realize, loop.loop_var):
                annotations[SIMD_REDUCTION] = (combiner, acc.data)
            body = loop.with_fields(body=body, annotations=annotations)
        mapping = {iv.var: v if v.dtype == iv.var.dtype else _op.cast(v, iv.var.dtype)
                   for iv, v in spatial}
        start = BufferStore(acc, substitute(init.value, mapping), zero)
        finish = BufferStore(out, acc_load, [substitute(i, mapping) for i in update.indices])
        result = Allocate(acc.data, acc.dtype, (1,), True,
                          DeclBuffer(acc, stmt_seq(start, body, finish)),
                          annotations={"scope": "local"})
        for loop in reversed(loops[:split]):
            result = loop.with_fields(body=result)
        return result


def localize_reduction(func):
    """``func`` with eligible reductions accumulated locally (see the module docstring)."""
    body = _Localizer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LocalizeReduction():  # noqa: N802  (passes are CamelCase factories)
    """The pass form of ``localize_reduction``."""
    return prim_func_pass(lambda f, mod, ctx: localize_reduction(f), "LocalizeReduction",
                          opt_level=1)
