"""Queries and rewrites on struct info: symbolic variables, erasure, least upper bound.

Symbolic shape variables (``tir.Var``) are *defined* where they first appear
as a whole dimension of a function parameter or a match_cast (``(n, 4)``
defines ``n``; ``(n * 2,)`` only uses it) and may be *used* anywhere after.
"""
from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.ir.base import structural_equal
from rvm.relax.expr import ShapeExpr, Var
from rvm.relax.struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from rvm.tir.expr import IntImm
from rvm.tir.expr import Var as TirVar


def collect_tir_vars(value):
    """The TIR variables appearing anywhere in ``value`` (a node, or sequences of them), in order
    of first appearance, each once.

    >>> n = TirVar("n", "int64")
    >>> [v.name_hint for v in collect_tir_vars(TensorStructInfo((n, n * 2), "float32"))]
    ['n']
    """
    found = {}

    def walk(x):
        if isinstance(x, TirVar):
            found.setdefault(id(x), x)
        elif isinstance(x, Node):
            if isinstance(x, Var):  # a relax Var's struct info belongs to its definition
                return
            for name in x._fields:
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for item in x:
                walk(item)
        elif isinstance(x, dict):
            for item in x.values():
                walk(item)

    walk(value)
    return list(found.values())


def definable_tir_vars(sinfo):
    """The TIR variables that ``sinfo`` defines when it annotates a parameter or a match_cast:
    those that are a whole dimension (or a PrimStructInfo value), in order, each once."""
    found = {}

    def walk(s):
        if isinstance(s, TensorStructInfo):
            for dim in s.shape_values or ():
                if isinstance(dim, TirVar):
                    found.setdefault(id(dim), dim)
        elif isinstance(s, ShapeStructInfo):
            for dim in s.values or ():
                if isinstance(dim, TirVar):
                    found.setdefault(id(dim), dim)
        elif isinstance(s, PrimStructInfo):
            if isinstance(s.value, TirVar):
                found.setdefault(id(s.value), s.value)
        elif isinstance(s, TupleStructInfo):
            for field in s.fields:
                walk(field)

    walk(sinfo)
    return list(found.values())


def _all_defined(exprs, defined_ids):
    return all(id(v) in defined_ids for v in collect_tir_vars(list(exprs)))


def erase_to_well_defined(sinfo, defined_tir_vars=(), defined_relax_vars=()):
    """``sinfo`` with every shape, dimension list or value that mentions a TIR variable not in
    ``defined_tir_vars`` (or a shape Var not in ``defined_relax_vars``) replaced by "unknown",
    keeping ranks and dtypes.

    >>> n = TirVar("n", "int64")
    >>> erase_to_well_defined(TensorStructInfo((n, 4), "float32")).shape is None
    True
    """
    tir_ids = {id(v) for v in defined_tir_vars}
    relax_ids = {id(v) for v in defined_relax_vars}

    def erase(s):
        if isinstance(s, TensorStructInfo):
            if s.shape is None:
                return s
            if isinstance(s.shape, ShapeExpr):
                keep = _all_defined(s.shape.values, tir_ids)
            else:
                keep = isinstance(s.shape, Var) and id(s.shape) in relax_ids
            return s if keep else TensorStructInfo(None, s.dtype, s.ndim)
        if isinstance(s, ShapeStructInfo):
            if s.values is None or _all_defined(s.values, tir_ids):
                return s
            return ShapeStructInfo(ndim=s.ndim)
        if isinstance(s, PrimStructInfo):
            if s.value is None or _all_defined([s.value], tir_ids):
                return s
            return PrimStructInfo(s.dtype)
        if isinstance(s, TupleStructInfo):
            fields = [erase(f) for f in s.fields]
            if all(a is b for a, b in zip(fields, s.fields)):
                return s
            return TupleStructInfo(fields)
        if isinstance(s, FuncStructInfo):
            if s.params is None:
                return FuncStructInfo.opaque_func(erase(s.ret), s.purity)
            inner = list(defined_tir_vars)
            for param in s.params:
                inner.extend(definable_tir_vars(param))
            ret = erase_to_well_defined(s.ret, inner, defined_relax_vars)
            return s if ret is s.ret else FuncStructInfo(s.params, ret, s.purity)
        return s

    return erase(sinfo)


def _same_prim(a, b):
    return a is b or structural_equal(a, b, map_free_vars=False)


def struct_info_lca(lhs, rhs):
    """The least upper bound of two struct infos: the most precise info true of both.

    >>> a = TensorStructInfo((2, 3), "float32")
    >>> struct_info_lca(a, TensorStructInfo((2, 4), "float32")).ndim
    2
    """
    if lhs is rhs:
        return lhs
    if isinstance(lhs, TensorStructInfo) and isinstance(rhs, TensorStructInfo):
        dtype = lhs.dtype if lhs.dtype == rhs.dtype else None
        ndim = lhs.ndim if lhs.ndim == rhs.ndim else -1
        shape = None
        lv, rv = lhs.shape_values, rhs.shape_values
        if lhs.shape is not None and lhs.shape is rhs.shape:
            shape = lhs.shape
        elif lv is not None and rv is not None and len(lv) == len(rv) and all(
                _same_prim(a, b) for a, b in zip(lv, rv)):
            shape = lhs.shape
        return TensorStructInfo(shape, dtype, ndim if shape is None else -1)
    if isinstance(lhs, ShapeStructInfo) and isinstance(rhs, ShapeStructInfo):
        if lhs.values is not None and rhs.values is not None and len(lhs.values) == len(
                rhs.values) and all(_same_prim(a, b) for a, b in zip(lhs.values, rhs.values)):
            return lhs
        return ShapeStructInfo(ndim=lhs.ndim if lhs.ndim == rhs.ndim else -1)
    if isinstance(lhs, PrimStructInfo) and isinstance(rhs, PrimStructInfo):
        if lhs.dtype != rhs.dtype:
            return ObjectStructInfo()
        if lhs.value is not None and rhs.value is not None and _same_prim(lhs.value, rhs.value):
            return lhs
        return PrimStructInfo(lhs.dtype)
    if isinstance(lhs, TupleStructInfo) and isinstance(rhs, TupleStructInfo):
        if len(lhs.fields) != len(rhs.fields):
            return ObjectStructInfo()
        return TupleStructInfo([struct_info_lca(a, b) for a, b in zip(lhs.fields, rhs.fields)])
    if isinstance(lhs, FuncStructInfo) and isinstance(rhs, FuncStructInfo):
        if structural_equal(lhs, rhs):
            return lhs
        return FuncStructInfo.opaque_func(purity=lhs.purity and rhs.purity)
    return ObjectStructInfo()


def substitute_tir_vars(value, mapping):
    """``value`` (a node or sequence) with TIR variables replaced by ``mapping[id(var)]``
    (PrimExprs); nodes without replaced parts are returned as they are."""
    if not mapping:
        return value

    def sub(x):
        if isinstance(x, TirVar):
            return mapping.get(id(x), x)
        if isinstance(x, Var):
            return x
        if isinstance(x, StructInfo) or isinstance(x, (PrimExpr, ShapeExpr)):
            changes = {}
            for name in x._fields:
                old = getattr(x, name)
                new = sub(old)
                if new is not old:
                    changes[name] = new
            if not changes:
                return x
            return _rebuild(x, changes)
        if isinstance(x, (list, tuple)):
            items = [sub(i) for i in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return type(x)(items)
        return x

    return sub(value)


def _rebuild(node, changes):
    if isinstance(node, ShapeExpr):
        return ShapeExpr(changes["values"])
    if isinstance(node, TensorStructInfo):
        fields = {"shape": node.shape, "dtype": node.dtype, "ndim": node.ndim, **changes}
        return TensorStructInfo(fields["shape"], fields["dtype"], -1 if fields["shape"]
                                is not None else fields["ndim"])
    if isinstance(node, ShapeStructInfo):
        return ShapeStructInfo(changes.get("values", node.values))
    if isinstance(node, PrimStructInfo):
        return PrimStructInfo(value=changes.get("value", node.value))
    if isinstance(node, TupleStructInfo):
        return TupleStructInfo(changes["fields"])
    if isinstance(node, FuncStructInfo):
        return FuncStructInfo(changes.get("params", node.params), changes.get("ret", node.ret),
                              node.purity)
    return node.with_fields(**changes)


def bind_symbolic_vars(param_sinfo, arg_sinfo, mapping):
    """Adds to ``mapping`` (id(tir var) -> PrimExpr) what matching an argument of struct info
    ``arg_sinfo`` against a parameter of ``param_sinfo`` tells about the parameter's
    definable symbolic variables."""
    if isinstance(param_sinfo, TensorStructInfo) and isinstance(arg_sinfo, TensorStructInfo):
        pairs = zip(param_sinfo.shape_values or (), arg_sinfo.shape_values or ())
    elif isinstance(param_sinfo, ShapeStructInfo) and isinstance(arg_sinfo, ShapeStructInfo):
        pairs = zip(param_sinfo.values or (), arg_sinfo.values or ())
    elif isinstance(param_sinfo, PrimStructInfo) and isinstance(arg_sinfo, PrimStructInfo):
        pairs = [(param_sinfo.value, arg_sinfo.value)] if arg_sinfo.value is not None else []
    elif isinstance(param_sinfo, TupleStructInfo) and isinstance(arg_sinfo, TupleStructInfo):
        for p, a in zip(param_sinfo.fields, arg_sinfo.fields):
            bind_symbolic_vars(p, a, mapping)
        return mapping
    else:
        return mapping
    for p, a in pairs:
        if isinstance(p, TirVar) and id(p) not in mapping:
            mapping[id(p)] = a
    return mapping


def derive_call_ret_struct_info(func_sinfo, arg_sinfos, defined_tir_vars=None):
    """The struct info of calling a function of ``func_sinfo`` on arguments of ``arg_sinfos``.

    Symbolic variables of the callee's parameters are bound from the
    arguments and substituted into its return; those left unbound are erased.
    """
    if func_sinfo.params is None:
        return func_sinfo.ret
    mapping = {}
    for param, arg in zip(func_sinfo.params, arg_sinfos):
        bind_symbolic_vars(param, arg, mapping)
    ret = substitute_tir_vars(func_sinfo.ret, mapping)
    callee_vars = []
    for param in func_sinfo.params:
        callee_vars.extend(definable_tir_vars(param))
    leftover = {id(v) for v in callee_vars if id(v) not in mapping}
    if not leftover:
        return ret
    keep = [v for v in collect_tir_vars(ret) if id(v) not in leftover]
    return erase_to_well_defined(ret, keep, _all_relax_vars(ret))


def _all_relax_vars(sinfo):
    found = []

    def walk(s):
        if isinstance(s, TensorStructInfo) and isinstance(s.shape, Var):
            found.append(s.shape)
        elif isinstance(s, TupleStructInfo):
            for f in s.fields:
                walk(f)

    walk(sinfo)
    return found


def is_scalar_bool(sinfo):
    """Whether ``sinfo`` can be the condition of an If: a bool scalar or a rank-0 tensor."""
    if isinstance(sinfo, PrimStructInfo):
        return sinfo.dtype is None or sinfo.dtype == "bool"
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.ndim in (0, -1)
    return isinstance(sinfo, ObjectStructInfo)


def shape_dims_known(sinfo):
    """The dimensions of a tensor struct info as ints when all are constants, else None."""
    values = sinfo.shape_values if isinstance(sinfo, TensorStructInfo) else None
    if values is None or not all(isinstance(v, IntImm) for v in values):
        return None
    return tuple(v.value for v in values)
