"""Legalization of the shape and joining operators: reshape, flatten, permute_dims,
expand_dims, squeeze, broadcast_to, concat, split, tile, repeat."""
from rvm.relax.analysis.tir_op_pattern import OpPatternKind
from rvm.relax.op.base import call_tir
from rvm.relax.op.infer_util import dims_text
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.te_bridge import lower_te_call
from rvm.tir.arith import Analyzer
from rvm.tir.expr import IntImm, Mul, StringImm
from rvm.tir.stmt import AssertStmt, Block, BlockRealize
from rvm.topi import join, transform
from rvm.relax.transform.legalize.registry import attr, kernel_name, register_legalize


def _known_shape(call):
    sinfo = call.struct_info_
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape_values is not None:
        return list(sinfo.shape_values)
    return None


@register_legalize("relax.reshape")
@register_legalize("relax.flatten")
def _reshape(bb, call):
    """The reshape kernel; when the element counts of the tensor and the new shape are not
    provably equal (a symbolic shape), the kernel checks them on entry: its row-major index
    arithmetic would otherwise wrap around the tensor and return wrong values."""
    shape = _known_shape(call)
    if shape is None:  # a shape known only at run time: no kernel can be made for it
        return call
    func, args, out_sinfo, tir_vars = lower_te_call(bb, transform.reshape,
                                                    [call.args[0], shape], {})
    buffers = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    src, dst = buffers[0], buffers[-1]  # the tensor, the result (shape variables follow)
    if not _same_count(src.shape, dst.shape):
        src_count, dst_count = _count(src.shape), _count(dst.shape)
        if not Analyzer().can_prove_equal(src_count, dst_count):
            message = (f"cannot reshape {src.dtype}{dims_text(src.shape)} into "
                       f"{dims_text(dst.shape)}: the element counts differ")
            func = func.with_body(_checked(func.body, src_count == dst_count,
                                           StringImm(message)))
            # a kernel of its own (opaque to fusion): FuseTIR merges root-block bodies of
            # loops and blocks only
            func = func.with_attr("op_pattern", int(OpPatternKind.OPAQUE))
    gvar = bb.add_func(func, kernel_name(call))
    return call_tir(gvar, args, out_sinfo, tir_vars=tir_vars or None)


def _checked(body, condition, message):
    """``body`` asserting ``condition`` first, inside its root block (as the script writes
    it: statements under ``# with T.block("root"):``)."""
    if isinstance(body, BlockRealize) and body.block.name_hint == "root":
        b = body.block
        block = Block(b.iter_vars, b.reads, b.writes, b.name_hint,
                      _checked(b.body, condition, message), b.init, b.alloc_buffers,
                      b.match_buffers, b.annotations)
        return BlockRealize(body.iter_values, body.predicate, block)
    return AssertStmt(condition, message, body)


def _same_count(a, b):
    """Whether shapes ``a`` and ``b`` have the same product as factors: equal constant
    products and the same symbolic factors (``(n, s, 4, 32)`` and ``(n * s, 128)``)."""
    def factors(shape):
        const, symbolic = 1, []
        stack = list(shape)
        while stack:
            d = stack.pop()
            if isinstance(d, IntImm):
                const *= d.value
            elif isinstance(d, Mul):
                stack += [d.a, d.b]
            else:
                symbolic.append(str(d))
        return const, sorted(symbolic)
    return factors(a) == factors(b)


def _count(shape):
    total = IntImm(shape[0].dtype if shape else "int64", 1)
    for d in shape:
        total = total * d
    return total


@register_legalize("relax.broadcast_to")
def _broadcast_to(bb, call):
    shape = _known_shape(call)
    if shape is None:
        return call
    return bb.call_te(transform.broadcast_to, call.args[0], shape,
                      primfunc_name_hint="broadcast_to")


@register_legalize("relax.permute_dims")
def _permute_dims(bb, call):
    return bb.call_te(transform.transpose, call.args[0], axes=attr(call, "axes"),
                      primfunc_name_hint="transpose")


@register_legalize("relax.expand_dims")
def _expand_dims(bb, call):
    return bb.call_te(transform.expand_dims, call.args[0], list(attr(call, "axis")),
                      primfunc_name_hint="expand_dims")


@register_legalize("relax.squeeze")
def _squeeze(bb, call):
    axis = attr(call, "axis")
    return bb.call_te(transform.squeeze, call.args[0], None if axis is None else list(axis),
                      primfunc_name_hint="squeeze")


@register_legalize("relax.concat")
def _concat(bb, call):
    return bb.call_te(join.concatenate, call.args[0], axis=attr(call, "axis", 0),
                      primfunc_name_hint="concatenate")


@register_legalize("relax.split")
def _split(bb, call):
    spec = attr(call, "indices_or_sections")
    spec = spec if isinstance(spec, int) else list(spec)
    return bb.call_te(join.split, call.args[0], spec, axis=attr(call, "axis", 0),
                      primfunc_name_hint="split")


@register_legalize("relax.tile")
def _tile(bb, call):
    return bb.call_te(join.tile, call.args[0], list(attr(call, "repeats")),
                      primfunc_name_hint="tile")


@register_legalize("relax.repeat")
def _repeat(bb, call):
    return bb.call_te(join.repeat, call.args[0], attr(call, "repeats"), attr(call, "axis"),
                      primfunc_name_hint="repeat")
