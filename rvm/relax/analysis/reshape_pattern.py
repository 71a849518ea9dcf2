"""Whether a TensorIR kernel is only a reshape (TVM's ``has_reshape_pattern``).

A kernel is a reshape when its output, visited once element by element, takes
each element from one input buffer at the same row-major position: the
flattened index of the load equals the flattened index of the store, and both
buffers hold the same number of elements of the same dtype. Such a kernel
copies bytes without changing them, so a view of the input with the output's
shape (``R.reshape``, ``vm.builtin.reshape``) gives the same tensor without
the copy; RewriteDataflowReshape makes that replacement.

The recognized form is the one TE's ``topi.reshape`` (and flatten) produce,
before scheduling: an optional root block, then one loop per output dimension,
each from 0 over that dimension, around a block of spatial axes bound to those
loops in order whose whole body is ``out[v0, ..., vk] = inp[...]``. Symbolic
dimensions are allowed when the index equalities are provable.

>>> from rvm.te.create_prim_func import create_prim_func
>>> from rvm.te.operation import placeholder
>>> from rvm.topi import transform
>>> A = placeholder((2, 3, 4), name="A")
>>> has_reshape_pattern(create_prim_func([A, transform.reshape(A, (6, 4))]))
True
>>> has_reshape_pattern(create_prim_func([A, transform.transpose(A, (0, 2, 1))]))
False
"""
from rvm.tir.arith import Analyzer
from rvm.tir.expr import BufferLoad, IntImm, IterVar, Range
from rvm.tir.free_vars import free_vars
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import BlockRealize, BufferStore, For
from rvm.tir.stmt_functor import substitute

# symbolic dimensions are sizes: [0, 2 ** 62), as rvm.tir.arith.simplify_size assumes
_SIZE_RANGE = (0, 1 << 62)


def has_reshape_pattern(func):
    """Whether the PrimFunc ``func`` only copies one of its input buffers into its last
    buffer parameter in row-major order (module docstring).

    >>> from rvm.te.create_prim_func import create_prim_func
    >>> from rvm.te.operation import compute, placeholder
    >>> A = placeholder((4,), name="A")
    >>> has_reshape_pattern(create_prim_func([A, compute((4,), lambda i: A[i] + 1.0)]))
    False
    """
    return reshape_source_param(func) is not None


def reshape_source_param(func):
    """The index in ``func.params`` of the buffer a reshape kernel reads, or None when
    ``func`` is not a reshape (module docstring)."""
    if not isinstance(func, PrimFunc):
        return None
    buffers = [(i, func.buffer_map[p]) for i, p in enumerate(func.params)
               if p in func.buffer_map]
    if len(buffers) < 2:
        return None
    dst = buffers[-1][1]
    found = _copy_nest(func.body)
    if found is None:
        return None
    loops, realize, store = found
    load = store.value
    if not _same_buffer(store.buffer, dst) or _same_buffer(load.buffer, dst):
        return None
    src_index = next((i for i, b in buffers[:-1] if _same_buffer(load.buffer, b)), None)
    if src_index is None or load.buffer.dtype != dst.dtype:
        return None
    if not all(_compact(b) for b in (load.buffer, dst)):
        return None
    if not _visits_each_output_once(loops, realize, store, dst):
        return None
    if not _same_flat_position(func, loops, realize, load, store):
        return None
    return src_index


def _copy_nest(stmt):
    """(loops, block realize, store) of ``[root block] for ... : block: out[...] = inp[...]``."""
    if isinstance(stmt, BlockRealize) and not stmt.block.iter_vars and \
            not isinstance(stmt.block.body, BufferStore):
        if not _plain_block(stmt):
            return None
        stmt = stmt.block.body
    loops = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize) or not _plain_block(stmt):
        return None
    store = stmt.block.body
    if not isinstance(store, BufferStore) or not isinstance(store.value, BufferLoad):
        return None
    return loops, stmt, store


def _plain_block(realize):
    """A block that only runs its body: no init, no buffers of its own, always executed."""
    block = realize.block
    predicate = realize.predicate
    return (block.init is None and not block.alloc_buffers and not block.match_buffers
            and isinstance(predicate, IntImm) and predicate.value == 1)


def _same_buffer(a, b):
    return a is b or a.data is b.data


def _compact(buffer):
    offset = buffer.elem_offset
    return not buffer.strides and isinstance(offset, IntImm) and offset.value == 0


def _visits_each_output_once(loops, realize, store, dst):
    """One spatial block axis per output dimension, bound in order to loops from 0 over that
    dimension, and the store writes at exactly those axes."""
    iters = realize.block.iter_vars
    rank = len(dst.shape)
    if not (len(loops) == len(iters) == len(store.indices) == rank):
        return False
    ana = Analyzer()
    for loop, iv, value, index, dim in zip(loops, iters, realize.iter_values, store.indices,
                                           dst.shape):
        if iv.iter_type != IterVar.DataPar or value is not loop.loop_var or index is not iv.var:
            return False
        if not (_is_zero(loop.min) and _is_zero(iv.dom.min)):
            return False
        if not (ana.can_prove_equal(loop.extent, dim) and ana.can_prove_equal(iv.dom.extent, dim)):
            return False
    return True


def _is_zero(expr):
    return isinstance(expr, IntImm) and expr.value == 0


def _flat(indices, shape):
    flat = IntImm(indices[0].dtype if indices else "int64", 0)  # no casts between terms
    for index, dim in zip(indices, shape):
        flat = flat * dim + index
    return flat


def _count(shape):
    total = IntImm(shape[0].dtype if shape else "int64", 1)
    for dim in shape:
        total = total * dim
    return total


def _same_flat_position(func, loops, realize, load, store):
    """Whether the load reads, for every output element, the input element at the same
    row-major position, and both buffers hold the same number of elements."""
    ana = Analyzer()
    low, high = (IntImm("int64", v) for v in _SIZE_RANGE)
    for buffer in func.buffer_map.values():
        for dim in buffer.shape:
            for var in free_vars(dim):
                ana.bind(var, Range(low, high))
    for loop in loops:
        ana.bind(loop.loop_var, Range.from_min_extent(loop.min, loop.extent))
    for iv in realize.block.iter_vars:
        ana.bind(iv.var, iv.dom)
    src, dst = load.buffer, store.buffer
    if not ana.can_prove_equal(_count(src.shape), _count(dst.shape)):
        return False
    # an axis over one element is 0 (the simplifier keeps such variables as they are)
    unit = {iv.var: IntImm(iv.var.dtype, 0) for iv in realize.block.iter_vars
            if isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1}
    with ana.assume_nonempty([loop.extent for loop in loops]):
        return ana.can_prove_equal(substitute(_flat(load.indices, src.shape), unit),
                                   substitute(_flat(store.indices, dst.shape), unit))
