"""Packing an operand into panels inside a kernel, and the mark a build-time pass folds.

``pack_panels(sch, block, read_index, width)`` copies the buffer a matmul reads as
``B[.., k, j]`` (or ``B[.., j, k]``, a dense or linear weight: ``transposed``) into
panels ``B_global[.., j // width, k, j % width]`` before the matmul
(``cache_read`` + ``transform_layout``), so the inner loop reads ``width``
contiguous elements per ``k`` instead of a row ``N`` elements away (which, for N a
power of two, also lands every row in the same few cache sets). The copy writes
each panel contiguously (vectorized over ``j % width``).

The copy block carries ``LAYOUT_REWRITE`` (TVM's ``meta_schedule.layout_rewrite_preproc``):
when the packed buffer is a constant at every call (``layout_free_buffers``),
``relax.transform.SplitLayoutRewritePreproc`` moves the copy out of the kernel and
applies it to the constant once, at build.
"""
from rvm.dlight.analysis import parallel_outer, work

LAYOUT_REWRITE = "meta_schedule.layout_rewrite_preproc"
LAYOUT_FREE = "layout_free_buffers"


def param_index(sch, buffer):
    """The position of ``buffer`` among the function's parameters, or None."""
    func = sch.mod["main"]
    for k, param in enumerate(func.params):
        if func.buffer_map.get(param) is buffer:
            return k
    return None


def is_layout_free(sch, buffer):
    """True when the parameter holding ``buffer`` is marked layout-free (a constant)."""
    index = param_index(sch, buffer)
    marked = sch.mod["main"].get_attr(LAYOUT_FREE) or ()
    return index is not None and index in [int(m) for m in marked]


def pack_panels(sch, block, read_index, width, info, transposed=False):
    """Packs the ``read_index``-th read of ``block`` (indexed ``[.., k, j]``, or ``[.., j, k]``
    when ``transposed``; ``j``'s extent a multiple of ``width``) into panels of ``width``
    columns (module docstring); returns the copy block."""
    copy = sch.cache_read(block, read_index, "global")
    ndim = len(sch.get(copy).writes[0].buffer.shape)
    lead = ndim - 2

    def panels(*idx):
        *batch, k, j = idx
        if transposed:
            j, k = k, j
        return (*batch, j // width, k, j % width)

    sch.transform_layout(copy, ("write", 0), panels)
    *batch, k, j = sch.get_loops(copy)
    if transposed:
        j, k = k, j
    j_o, j_i = sch.split(j, [None, width])
    sch.reorder(*batch, j_o, k, j_i)
    sch.vectorize(j_i)
    parallel_outer(sch, [*batch, j_o] if lead else [j_o], work(sch, [*batch, j_o, k, j_i]), info)
    sch.annotate(copy, LAYOUT_REWRITE, 1)
    return copy
