"""SplitLayoutRewritePreproc: apply a kernel's packing of a constant input at build time.

A default schedule that stores a layout-free input (``layout_free_buffers``: a constant
at every call, see AttachAttrLayoutFreeBuffers) in another layout copies it into a
packed buffer in a loop nest whose block carries ``meta_schedule.layout_rewrite_preproc``
(``rvm.dlight.cpu.pack``). This pass takes that nest out of the kernel (TVM splits it
into a function of its own, which constant folding then runs): the packed buffer becomes
the kernel's parameter in the input's place, and at every call the constant is replaced
by its packed copy, computed once here with numpy from the copy's index expressions. The
executable then holds the packed constant and a call does no packing.

A nest is left in its kernel (correct, packing per call) when it is not a plain copy
(``P[f(v)] = C[g(v)]``, or a padded one ``P[f(v)] = if_then_else(a(v) < b(v), C[g(v)],
fill)``, over a nest of constant loops, integer index arithmetic, every element of ``P``
written once) or when the input is read elsewhere in the kernel. The
index expressions are evaluated on grids of at most ``GRID_LIMIT`` points at a time,
so a weight of any size is packed.

>>> import numpy as np
>>> from rvm import relax
>>> from rvm.dlight import DefaultCPUSchedule
>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> bb = relax.BlockBuilder()
>>> x = Var("x", TensorStructInfo((1, 16), "float32"))
>>> with bb.function("main", [x]):
...     out = bb.emit(relax.op.matmul(x, relax.const(np.ones((16, 256), "float32"))))
...     _ = bb.emit_func_output(out)
>>> mod = relax.transform.LegalizeOps()(bb.get())
>>> mod = relax.transform.AttachAttrLayoutFreeBuffers()(mod)
>>> mod = SplitLayoutRewritePreproc()(DefaultCPUSchedule()(mod))
>>> tuple(mod["main"].body.blocks[0].bindings[0].value.args[1].fields[1].data.shape)
(4, 16, 64)
"""
import numpy as np

from rvm.dlight.cpu.pack import LAYOUT_FREE, LAYOUT_REWRITE
from rvm.ir.expr import GlobalVar
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.expr import Constant, Tuple
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.op.registry import Op
from rvm.relax.transform.attach_attr_layout_free_buffers import layout_free_positions
from rvm.relax.transform.function_pass import replace_functions, rewrite_functions
from rvm.runtime.ndarray import array
from rvm.tir import op as _op
from rvm.tir.analysis.index_eval import GRID_LIMIT, NotEvaluable, eval_on_grid
from rvm.tir.expr import LT, BufferLoad, Call, FloatImm, IntImm, Var
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import BlockRealize, BufferStore, For, SeqStmt, stmt_seq
from rvm.tir.stmt_functor import post_order_visit, substitute


class Preproc:
    """One packing nest of a kernel: input parameter ``position``, its packed buffer
    ``packed``, and the copy's store and load indices as expressions of the nest's loop
    variables ``axes`` ([(var, extent)]); a padded copy (``P[f(v)] = C[g(v)] if a(v) < b(v)
    else fill``) has ``below`` = a - b and ``fill``."""

    def __init__(self, position, packed, store, load, axes, below=None, fill=None):
        self.position, self.packed = position, packed
        self.store, self.load, self.axes = list(store), list(load), list(axes)
        self.below, self.fill = below, fill

    def chunks(self):
        """(destination, source, read) index arrays of the copy, a grid of at most
        GRID_LIMIT points at a time (NotEvaluable when an index is not integer arithmetic):
        the destination of every point, the source of the points that read (``read``)."""
        extra = [] if self.below is None else [self.below]
        for dst, rest in _chunks(self.store + self.load + extra, self.axes, len(self.store)):
            read = rest[-1] < 0 if extra else np.ones(dst[0].shape, dtype=bool)
            src = rest[:len(self.load)]
            yield dst, tuple(s[read] for s in src), read

    def apply(self, data):
        """``data`` (the input's numpy array) in the packed layout."""
        shape = [int(d) for d in self.packed.shape]
        out = np.empty(shape, data.dtype) if self.fill is None else \
            np.full(shape, self.fill, data.dtype)
        for dst, src, read in self.chunks():
            out[tuple(d[read] for d in dst)] = data[src]
        return out


def _chunks(exprs, axes, split):
    """``eval_on_grid`` over ``axes`` in slices of the outer axes that fit GRID_LIMIT:
    yields (first ``split`` index arrays, the rest), flattened."""
    inner = int(np.prod([e for _, e in axes[1:]], dtype=np.int64))
    if not axes or inner * axes[0][1] <= GRID_LIMIT:
        values = [v.reshape(-1) for v in eval_on_grid(exprs, axes)]
        yield tuple(values[:split]), tuple(values[split:])
        return
    var, extent = axes[0]
    if inner > GRID_LIMIT:  # one value of this axis at a time, the next axes sliced
        for value in range(extent):
            fixed = [substitute(e, {var: _op.const(value, var.dtype)}) for e in exprs]
            yield from _chunks(fixed, axes[1:], split)
        return
    step = GRID_LIMIT // inner
    for start in range(0, extent, step):
        part = Var(var.name_hint, var.dtype)
        moved = [substitute(e, {var: part + _op.const(start, var.dtype)}) for e in exprs]
        yield from _chunks(moved, [(part, min(step, extent - start))] + axes[1:], split)


def _nest(stmt):
    """([(loop var, extent)], BlockRealize) of a perfect nest of constant loops from 0."""
    axes = []
    while isinstance(stmt, For):
        if not (isinstance(stmt.extent, IntImm) and getattr(stmt.min, "value", None) == 0):
            return None, None
        axes.append((stmt.loop_var, stmt.extent.value))
        stmt = stmt.body
    return (axes, stmt) if isinstance(stmt, BlockRealize) else (None, None)


def _copy(func, stmt, allocated, free):
    """The Preproc of top-level nest ``stmt``, or None when it is not one (module docstring)."""
    axes, realize = _nest(stmt)
    if realize is None or not realize.block.annotations.get(LAYOUT_REWRITE):
        return None
    block, store = realize.block, realize.block.body
    if block.init is not None or getattr(realize.predicate, "value", None) != 1 \
            or not isinstance(store, BufferStore):
        return None
    load, below, fill = _padded(store.value)
    if load is None:
        return None
    positions = [k for k, p in enumerate(func.params) if func.buffer_map.get(p) is load.buffer]
    if len(positions) != 1 or positions[0] not in free \
            or not any(b is store.buffer for b in allocated):
        return None
    bind = {id(iv.var): v for iv, v in zip(block.iter_vars, realize.iter_values)}
    lookup = lambda var: bind.get(id(var))  # noqa: E731
    pre = Preproc(positions[0], store.buffer, [substitute(e, lookup) for e in store.indices],
                  [substitute(e, lookup) for e in load.indices], axes,
                  None if below is None else substitute(below, lookup), fill)
    shape = [int(d) for d in store.buffer.shape]
    written = np.zeros(shape, dtype=bool)
    count = 0
    try:
        for dst, src, _ in pre.chunks():
            if not (_inside(dst, shape) and _inside(src, [int(d) for d in load.buffer.shape])):
                return None  # numpy would wrap a negative index around
            written[dst] = True
            count += dst[0].size
    except NotEvaluable:
        return None
    if not written.all() or written.size != count:  # every element, each once
        return None
    return pre


def _padded(value):
    """(load, below, fill) of a copied value: ``C[..]`` gives (load, None, None);
    ``if_then_else(a < b, C[..], fill)`` (a constant ``fill``: padding, rvm.dlight.cpu
    .pad_columns) gives (load, a - b, fill); anything else (None, None, None)."""
    if isinstance(value, BufferLoad):
        return value, None, None
    if isinstance(value, Call) and value.op == "tir.if_then_else":
        cond, then, other = value.args
        if isinstance(cond, LT) and isinstance(then, BufferLoad) \
                and isinstance(other, (IntImm, FloatImm)):
            return then, _op.subtract(cond.a, cond.b), other.value
    return None, None, None


def _inside(indices, shape):
    return all(idx.size == 0 or (idx.min() >= 0 and idx.max() < dim)
               for idx, dim in zip(indices, shape))


def _uses(stmt, buffer):
    found = []

    def visit(node):
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer is buffer:
            found.append(node)
        for region in getattr(node, "reads", ()) + getattr(node, "writes", ()):
            if getattr(region, "buffer", None) is buffer:
                found.append(region)

    post_order_visit(stmt, visit)
    return bool(found)


def split_kernel(func, constant=None):
    """(kernel without its packing nests, [Preproc]) or (func, []) when nothing splits;
    ``constant``: the argument positions that are constants at every call (all marked
    ``layout_free_buffers`` when None)."""
    free = [int(k) for k in func.get_attr(LAYOUT_FREE) or ()
            if constant is None or int(k) in constant]
    root_realize = func.body
    if not free or not isinstance(root_realize, BlockRealize):
        return func, []
    root = root_realize.block
    children = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    kept, found = [], []
    for child in children:
        pre = _copy(func, child, root.alloc_buffers, free)
        (kept if pre is None else found).append(child if pre is None else pre)
    if not found or not kept:
        return func, []
    body = stmt_seq(*kept)
    inputs = [func.buffer_map[func.params[p.position]] for p in found]
    if any(_uses(body, buf) for buf in inputs):
        return func, []
    params, buffer_map = list(func.params), dict(func.buffer_map)
    for pre in found:
        old = params[pre.position]
        del buffer_map[old]
        params[pre.position] = Var(pre.packed.name, "handle")
        buffer_map[params[pre.position]] = pre.packed
    packed = {id(p.packed) for p in found}
    new_root = root.with_fields(body=body, alloc_buffers=tuple(
        b for b in root.alloc_buffers if id(b) not in packed))
    new = PrimFunc(params, root_realize.with_fields(block=new_root), func.ret_type,
                   buffer_map, func.attrs, func.span)
    return new, found


class _PackConstants(ExprMutator):
    def __init__(self, mod, preprocs):
        super().__init__(mod)
        self.preprocs = preprocs
        self.memo = {}

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not (isinstance(call.op, Op) and call.op.name == "relax.call_tir"
                and isinstance(call.args[0], GlobalVar)
                and call.args[0].name_hint in self.preprocs):
            return call
        fields = list(call.args[1].fields)
        for pre in self.preprocs[call.args[0].name_hint]:
            const = fields[pre.position]
            key = (id(const), id(pre))
            if key not in self.memo:
                self.memo[key] = (const, Constant(array(pre.apply(const.data.numpy()))))
            fields[pre.position] = self.memo[key][1]
        return call.with_fields(args=[call.args[0], Tuple(fields), *call.args[2:]])


def split_layout_rewrite_preproc(mod, ctx=None):
    """``mod`` with the packing of constant kernel inputs done at build (module docstring)."""
    changed, preprocs = {}, {}
    constant = layout_free_positions(mod)  # still constants at every call
    for gv, func in mod.functions.items():
        if isinstance(func, PrimFunc):
            new, found = split_kernel(func, constant.get(gv.name_hint, ()))
            if found:
                changed[gv], preprocs[gv.name_hint] = new, found
    if not changed:
        return mod
    mod = replace_functions(mod, changed)
    return rewrite_functions(mod, _PackConstants(mod, preprocs))


def SplitLayoutRewritePreproc():  # noqa: N802  (passes are CamelCase factories)
    """A pass packing constant kernel inputs at build (module docstring)."""
    return ModulePass(split_layout_rewrite_preproc, PassInfo(0, "SplitLayoutRewritePreproc"))
