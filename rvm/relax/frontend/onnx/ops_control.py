"""ONNX control flow: If and Loop, on Relax If and recursive Relax functions.

A subgraph (a branch of If, the body of Loop) becomes a Relax function of the
module: its parameters are its own inputs, then the run-time values of the
enclosing graph it reads (constants of the enclosing graph stay constants).

``If`` with a condition known at import converts the chosen branch in place.
Otherwise the node calls a function ``if<k>(cond, captured...)`` whose body is a
Relax If calling ``if<k>_then`` or ``if<k>_else``.

``Loop(M, cond, v...)`` calls the recursive function
``loop<k>(i, cond, M, v..., scans..., captured...)``: while ``cond and i < M`` it
calls the body ``loop<k>_body`` (one iteration: the next ``i``, ``cond``, loop-carried
values, and each scan output appended to its accumulator) and then itself;
otherwise it returns the loop-carried values and the scan outputs, which start
empty (shape ``(0, ...)``). A carried value whose static shape provably changes
in an iteration gets symbolic dimensions; one whose new shape is only known at run
time is checked to keep its shape (``match_cast``). A scan output's element shape
must be static. Outputs whose shape is only known at run time get new symbolic
dimensions (``match_cast``).
"""
import numpy as np

from rvm.relax.frontend.onnx.common import OnnxImportError
from rvm.relax.frontend.onnx.registry import converter
from rvm.relax.frontend.onnx.strings import StringTensor
from rvm.relax.frontend.onnx.values import (
    Optional, Sequence, desc_of, from_expr, is_constant, rebind, tensor_value, type_desc,
)
from rvm.ir.expr import GlobalVar, PrimExpr
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import Call, If, Tuple, TupleGetItem, Var
from rvm.relax.op import binary, create, join, manipulate
from rvm.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, TensorStructInfo, TupleStructInfo,
)
from rvm.tir.expr import Var as TirVar

#: The trip count of a Loop without one.
NO_TRIP_COUNT = np.iinfo(np.int64).max
_SCALAR_I64 = TensorStructInfo((), "int64")
_SCALAR_BOOL = TensorStructInfo((), "bool")


# -- subgraphs ----------------------------------------------------------------------------
def _names(graph, used, defined):
    defined.update(v.name for v in graph.input)
    defined.update(t.name for t in graph.initializer)
    for node in graph.node:
        used.extend(n for n in node.input if n)
        defined.update(n for n in node.output if n)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _names(sub, used, defined)
    used.extend(o.name for o in graph.output)


def captured_names(ctx, graphs):
    """The names the subgraphs ``graphs`` read from the enclosing graph, in order of use."""
    used, defined = [], set()
    for graph in graphs:
        _names(graph, used, defined)
    out = []
    for name in used:
        if name not in defined and name in ctx.env and ctx.env[name] is not None \
                and name not in out:
            out.append(name)
    return out


def _capture(ctx, sub, names):
    """Binds the captured ``names`` in ``sub``: constants as they are, run-time values as new
    parameters (returned, with the outer values to pass: emit them with ``_emit_args``)."""
    params, args = [], []
    for name in names:
        value = ctx.env[name]
        if is_constant(value):
            sub.env[name] = value
            continue
        if isinstance(value, (Sequence, Optional, StringTensor)):
            var = Var(name, ObjectStructInfo())
            sub.env[name] = rebind(ctx, value, var)
        else:
            var = Var(name, ctx.sinfo(value))
            sub.env[name] = var
        params.append(var)
        args.append(ctx.expr(value))
    return params, args


def _emit_args(ctx, args):
    """Binds the arguments that are not variables (tuples of a static sequence, the null
    of an empty optional)."""
    return [a if isinstance(a, Var) else ctx.emit(a) for a in args]


def _sinfo_of(ctx, value):
    """The struct info of a loop-carried value: a tensor's own, ``R.Object`` for a sequence
    or optional (a runtime tuple or None whose length changes between iterations)."""
    return ObjectStructInfo() if isinstance(value, (Sequence, Optional)) else ctx.sinfo(value)


def _bind_initializers(sub, graph):
    for proto in graph.initializer:
        sub.env[proto.name] = tensor_value(proto)


def _add_function(ctx, sub, name):
    """Adds the function ``name`` that ``sub`` built to the import's module."""
    func = sub.bb.get()[name]
    gvar = ctx.root.bb.add_func(func, name)
    return gvar


def _scalar(ctx, value, dtype):
    """A one-element tensor as a rank-0 tensor of ``dtype``."""
    value = ctx.tensor(value, dtype if isinstance(value, np.ndarray) else None)
    if ctx.dtype(value) != dtype:
        raise OnnxImportError(f"expected a {dtype} scalar, got {ctx.dtype(value)}")
    if ctx.shape(value) != []:
        value = ctx.emit(manipulate.reshape(value, ()))
    return value


def _is_static(sinfo):
    values = sinfo.shape_values if isinstance(sinfo, TensorStructInfo) else None
    return values is not None and all(isinstance(getattr(v, "value", None), int) for v in values)


def _erase_shape(sinfo):
    """``sinfo`` with every dimension a new symbolic variable."""
    return TensorStructInfo([TirVar(f"d{k}", "int64") for k in range(sinfo.ndim)], sinfo.dtype)


def _fresh_dims(ctx, value, hint):
    """``value`` (a tensor or tuple of them) with unknown shapes cast to new symbolic dims."""
    sinfo = value.struct_info_
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape_values is None:
        if sinfo.ndim < 0:
            raise OnnxImportError("an output's rank differs between branches or iterations")
        dims = [TirVar(f"{hint}_d{k}", "int64") for k in range(sinfo.ndim)]
        return ctx.bb.match_cast(value, TensorStructInfo(dims, sinfo.dtype))
    return value


def _outputs(ctx, call, descs, hint, as_tuple=False):
    """The values of a subgraph function's result: ``descs`` are their types (None: a tensor),
    ``as_tuple`` whether a single one is still a field of a tuple."""
    result = ctx.emit(call, hint)
    if len(descs) == 1 and not as_tuple:
        return [_output(ctx, result, descs[0], hint)]
    return [_output(ctx, ctx.emit(TupleGetItem(result, k)), desc, f"{hint}{k}")
            for k, desc in enumerate(descs)]


def _output(ctx, value, desc, hint):
    if desc is not None and desc.kind != "tensor":
        return from_expr(ctx, desc, value, hint)
    if not isinstance(value.struct_info_, TensorStructInfo):
        raise OnnxImportError(f"an output is {type(value.struct_info_).__name__}; its type "
                              "says tensor")
    return _fresh_dims(ctx, value, hint)


def _declared(value_info, what):
    """The TypeDesc of a subgraph input or output that is a sequence or optional (None for
    a tensor or an untyped value: tensors take their struct info from the Relax value)."""
    if value_info.type.WhichOneof("value") in (None, "tensor_type"):
        return None
    return type_desc(value_info.type, what)


def _result(values):
    return values[0] if len(values) == 1 else Tuple(values)


# -- If -----------------------------------------------------------------------------------
def _branch_function(ctx, graph, name, names):
    sub = ctx.child()
    params, _ = _capture(ctx, sub, names)
    _bind_initializers(sub, graph)
    with sub.bb.function(name, params=params):
        with sub.bb.dataflow():
            sub.convert_nodes(graph.node)
            outs = _emit_args(sub, [sub.expr(sub.env[o.name]) for o in graph.output])
            out = sub.bb.emit_output(_result(outs))
        sub.bb.emit_func_output(out)
    return _add_function(ctx, sub, name)


@converter("If")
def _if(ctx, inputs, attrs):
    then_graph, else_graph = attrs["then_branch"], attrs["else_branch"]
    if len(then_graph.output) != len(else_graph.output):
        raise ValueError(f"the branches have {len(then_graph.output)} and "
                         f"{len(else_graph.output)} outputs; expected the same number")
    cond = inputs[0]
    if isinstance(cond, np.ndarray) and cond.dtype != object:
        graph = then_graph if bool(cond.reshape(-1)[0]) else else_graph
        for proto in graph.initializer:
            ctx.env[proto.name] = tensor_value(proto)
        ctx.convert_nodes(graph.node)
        return [ctx.env[o.name] for o in graph.output]
    names = captured_names(ctx, [then_graph, else_graph])
    name = ctx.function_name("if")
    then_gv = _branch_function(ctx, then_graph, f"{name}_then", names)
    else_gv = _branch_function(ctx, else_graph, f"{name}_else", names)
    sub = ctx.child()
    cond_var = Var("cond", _SCALAR_BOOL)
    params, args = _capture(ctx, sub, names)
    with sub.bb.function(name, params=[cond_var] + params):
        out = sub.bb.emit(If(cond_var, Call(then_gv, params), Call(else_gv, params)))
        sub.bb.emit_func_output(out)
    gvar = _add_function(ctx, sub, name)
    call = Call(gvar, [_scalar(ctx, cond, "bool")] + _emit_args(ctx, args))
    descs = [_declared(o, f"output '{o.name}' of If") for o in then_graph.output]
    return _outputs(ctx, call, descs, name)


# -- Loop ---------------------------------------------------------------------------------
class _ShapeChanges(Exception):
    """A loop-carried value's shape differs after an iteration (``index``)."""

    def __init__(self, index):
        super().__init__(index)
        self.index = index


def _body_function(ctx, body, name, names, carried, n_scans, descs):
    """The function of one iteration; returns its GlobalVar and the scan element struct
    infos. ``carried`` are the struct infos of the loop-carried values, ``descs`` their
    types (None: a tensor)."""
    sub = ctx.child()
    i, cond = Var("i", _SCALAR_I64), Var("cond", _SCALAR_BOOL)
    values = [Var(f"v{k}", s) for k, s in enumerate(carried)]
    captured, _ = _capture(ctx, sub, names)
    _bind_initializers(sub, body)
    for var, value_info in zip([i, cond], body.input):
        sub.env[value_info.name] = var
    for var, value_info, desc in zip(values, body.input[2:], descs):
        if desc is not None:
            declared = _declared(value_info, f"loop-carried input '{value_info.name}'")
            var = from_expr(sub, declared or desc, var)
        sub.env[value_info.name] = var
    with sub.bb.function(name):
        with sub.bb.dataflow():
            sub.convert_nodes(body.node)
            outs = [sub.env[o.name] for o in body.output]
            cond_out = _scalar(sub, outs[0], "bool")
            next_values = _emit_args(sub, [sub.expr(v) for v in outs[1:1 + len(values)]])
            matched = {}  # values checked to keep their shape, by id
            for k, (value, sinfo) in enumerate(zip(next_values, carried)):
                if descs[k] is not None:
                    if isinstance(value.struct_info_, TensorStructInfo):
                        raise OnnxImportError(f"loop-carried value {k} is a {descs[k].kind} "
                                              "before an iteration and a tensor after it")
                    continue
                got = sub.sinfo(value)
                if got.ndim != sinfo.ndim or got.dtype != sinfo.dtype:
                    raise OnnxImportError(
                        f"loop-carried value {k} is {sinfo.dtype} of rank {sinfo.ndim} before "
                        f"an iteration and {got.dtype} of rank {got.ndim} after it")
                if _is_static(sinfo) and not _same_shape(got, sinfo):
                    if _is_static(got):
                        raise _ShapeChanges(k)
                    next_values[k] = matched[id(value)] = sub.bb.match_cast(value, sinfo)
            scans, accumulators, elements = [], [], []
            for k, value in enumerate(outs[1 + len(values):]):
                value = sub.tensor(value)
                value = matched.get(id(value), value)
                element = sub.sinfo(value)
                if not _is_static(element):
                    raise OnnxImportError(f"scan output {k} has the shape "
                                          f"{element.shape_values}; expected a static shape")
                dims = [TirVar(f"n{k}", "int64")] + list(element.shape_values)
                acc = Var(f"scan{k}", TensorStructInfo(dims, element.dtype))
                accumulators.append(acc)
                elements.append(element)
                scans.append(sub.emit(join.concat(
                    [acc, sub.emit(manipulate.expand_dims(value, [0]))], axis=0)))
            next_i = sub.emit(binary.add(i, sub.tensor(np.array(1, "int64"))))
            out = sub.bb.emit_output(Tuple([next_i, cond_out] + next_values + scans))
        params = [i, cond] + values + accumulators + captured
        sub.bb.emit_func_output(out, params=params)
    if len(elements) != n_scans:
        raise OnnxImportError(f"the body gives {len(elements)} scan outputs, expected {n_scans}")
    return _add_function(ctx, sub, name), elements


def _same_shape(a, b):
    va, vb = a.shape_values, b.shape_values
    if va is None or vb is None or len(va) != len(vb):
        return False
    return all(_dim_equal(x, y) for x, y in zip(va, vb))


def _dim_equal(x, y):
    x, y = getattr(x, "value", x), getattr(y, "value", y)
    if isinstance(x, PrimExpr) or isinstance(y, PrimExpr):
        return x is y
    return x == y


def _loop_function(ctx, name, body_gv, carried, elements, captured_sinfo):
    sub = ctx.child()
    i, cond, trips = Var("i", _SCALAR_I64), Var("cond", _SCALAR_BOOL), Var("M", _SCALAR_I64)
    values = [Var(f"v{k}", s) for k, s in enumerate(carried)]
    scans = [Var(f"scan{k}", TensorStructInfo([TirVar(f"n{k}", "int64")] +
                                              list(e.shape_values), e.dtype))
             for k, e in enumerate(elements)]
    captured = [Var(f"c{k}", s) for k, s in enumerate(captured_sinfo)]
    params = [i, cond, trips] + values + scans + captured
    ret = TupleStructInfo([s if _is_static(s) or not isinstance(s, TensorStructInfo) else
                           TensorStructInfo(ndim=s.ndim, dtype=s.dtype) for s in carried] +
                          [TensorStructInfo(ndim=e.ndim + 1, dtype=e.dtype) for e in elements])
    gvar = GlobalVar(name)
    object.__setattr__(gvar, "struct_info_",
                       FuncStructInfo([p.struct_info_ for p in params], ret))
    step = Var("step")
    fields = [TupleGetItem(step, k) for k in range(2 + len(values) + len(scans))]
    again = Call(gvar, fields[:2] + [trips] + fields[2:] + captured)
    then = SeqExpr([BindingBlock([VarBinding(step, Call(body_gv, [i, cond] + values + scans +
                                                        captured))])], again)
    with sub.bb.function(name, params=params):
        go = sub.bb.emit(binary.logical_and(cond, binary.less(i, trips)), "go")
        out = sub.bb.emit(If(go, then, Tuple(values + scans)))
        sub.bb.emit_func_output(out)
    return _add_function(ctx, sub, name)


@converter("Loop")
def _loop(ctx, inputs, attrs):
    body = attrs["body"]
    trips = inputs[0] if inputs else None
    cond = inputs[1] if len(inputs) > 1 else None
    initial = list(inputs[2:])
    if len(body.input) != 2 + len(initial):
        raise ValueError(f"the body takes {len(body.input)} inputs; expected 2 + the "
                         f"{len(initial)} loop-carried values")
    n_scans = len(body.output) - 1 - len(initial)
    if n_scans < 0:
        raise ValueError(f"the body gives {len(body.output)} outputs; expected at least 1 + "
                         f"the {len(initial)} loop-carried values")
    names = captured_names(ctx, [body])
    name = ctx.function_name("loop")
    carried = [_sinfo_of(ctx, v) for v in initial]
    descs = [desc_of(ctx, v) if isinstance(v, (Sequence, Optional)) else None for v in initial]
    for _ in range(len(carried) + 1):
        try:
            body_gv, elements = _body_function(ctx, body, f"{name}_body", names, carried,
                                               n_scans, descs)
            break
        except _ShapeChanges as change:
            carried[change.index] = _erase_shape(carried[change.index])
    sub = ctx.child()
    captured, args = _capture(ctx, sub, names)
    gvar = _loop_function(ctx, name, body_gv, carried, elements,
                          [c.struct_info_ for c in captured])
    trips = ctx.tensor(np.array(NO_TRIP_COUNT)) if trips is None else _scalar(ctx, trips,
                                                                               "int64")
    cond = ctx.tensor(np.array(True)) if cond is None else _scalar(ctx, cond, "bool")
    empty = [ctx.emit(create.zeros([0] + list(e.shape_values), str(e.dtype))) for e in elements]
    initial = _emit_args(ctx, [ctx.expr(v) for v in initial])
    call = Call(gvar, [ctx.tensor(np.array(0, "int64")), cond, trips] + initial + empty +
                _emit_args(ctx, args))
    outs = [_declared(o, f"output '{o.name}' of Loop's body") or d
            for o, d in zip(body.output[1:], descs)] + [None] * n_scans
    return _outputs(ctx, call, outs, name, as_tuple=True)
