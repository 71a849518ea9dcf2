"""Core calling operators: call_tir, call_tir_inplace, call_dps_packed, call_pure_packed,
call_packed, and the closure operators make_closure / invoke_closure.

``call_tir(gv, (x, w), out_sinfo)`` calls the PrimFunc ``gv`` in destination
passing style: the outputs described by ``out_sinfo`` are allocated by the
caller and passed after the inputs. ``call_dps_packed`` does the same for a
function found by name at run time. ``call_packed`` calls a registered
function directly; it is impure, so it cannot appear in a dataflow block.
``call_tir_inplace`` is call_tir whose outputs at ``inplace_indices`` are
inputs the kernel overwrites instead of fresh tensors.
"""
from rvm.ir.expr import GlobalVar, RelaxExpr
from rvm.ir.base import structural_equal
from rvm.relax.expr import Call, ExternFunc, ShapeExpr, Tuple
from rvm.relax.op.registry import Op, register_op
from rvm.relax.struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)


def _out_sinfo(out_sinfo, who):
    if isinstance(out_sinfo, (list, tuple)):
        fields = list(out_sinfo)
        for i, s in enumerate(fields):
            if not isinstance(s, TensorStructInfo):
                raise TypeError(f"{who}: out_sinfo[{i}] must be a TensorStructInfo, got "
                                f"{type(s).__name__}")
        return fields[0] if len(fields) == 1 else TupleStructInfo(fields)
    if not isinstance(out_sinfo, StructInfo):
        raise TypeError(f"{who}: out_sinfo must be a TensorStructInfo or a list of them, got "
                        f"{type(out_sinfo).__name__}")
    return out_sinfo


def _args_tuple(args, who):
    if isinstance(args, RelaxExpr):
        sinfo = args.struct_info_
        if isinstance(args, Tuple) or isinstance(sinfo, TupleStructInfo):
            return args
        return Tuple([args])
    if isinstance(args, (list, tuple)):
        return Tuple(args)
    raise TypeError(f"{who}: args must be a Relax expression or a sequence of them, got "
                    f"{type(args).__name__}")


def call_tir(gvar, args, out_sinfo, tir_vars=None):
    """Calls the PrimFunc ``gvar`` on ``args``; the result has ``out_sinfo`` (a TensorStructInfo,
    or a list of them for several outputs). ``tir_vars`` are extra symbolic integer arguments.

    >>> from rvm.relax.expr import Var
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> call = call_tir(GlobalVar("relu"), (x,), TensorStructInfo((4,), "float32"))
    >>> call.op.name, len(call.args)
    ('relax.call_tir', 2)
    """
    if not isinstance(gvar, GlobalVar):
        raise TypeError(f"call_tir: expected the GlobalVar of a PrimFunc, got "
                        f"{type(gvar).__name__}")
    call_args = [gvar, _args_tuple(args, "call_tir")]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, RelaxExpr) else ShapeExpr(tir_vars))
    return Call(Op.get("relax.call_tir"), call_args,
                sinfo_args=[_out_sinfo(out_sinfo, "call_tir")])


def call_dps_packed(func, args, out_sinfo):
    """Calls the function named ``func`` (a str or ExternFunc) in destination passing style.

    >>> from rvm.relax.expr import Var
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> call_dps_packed("env.relu", (x,), TensorStructInfo((4,), "float32")).args[0].global_symbol
    'env.relu'
    """
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(func, ExternFunc):
        raise TypeError(f"call_dps_packed: expected a function name or ExternFunc, got "
                        f"{type(func).__name__}")
    return Call(Op.get("relax.call_dps_packed"), [func, _args_tuple(args, "call_dps_packed")],
                sinfo_args=[_out_sinfo(out_sinfo, "call_dps_packed")])


def _sinfo_args(sinfo_args, who):
    if sinfo_args is None:
        return []
    if isinstance(sinfo_args, StructInfo):
        return [sinfo_args]
    sinfo_args = list(sinfo_args)
    for i, s in enumerate(sinfo_args):
        if not isinstance(s, StructInfo):
            raise TypeError(f"{who}: sinfo_args[{i}] must be a StructInfo, got {type(s).__name__}")
    return sinfo_args


def call_packed(func, *args, sinfo_args=None):
    """Calls the registered function ``func`` (a str or ExternFunc) on ``args``; impure.

    The result's struct info is ``sinfo_args`` (one StructInfo), else any object.
    """
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(func, ExternFunc):
        raise TypeError(f"call_packed: expected a function name or ExternFunc, got "
                        f"{type(func).__name__}")
    return Call(func, args, sinfo_args=_sinfo_args(sinfo_args, "call_packed"))


def call_pure_packed(func, *args, sinfo_args=None):
    """Like call_packed, but declares the call pure, so it may appear in a dataflow block."""
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(func, ExternFunc):
        raise TypeError(f"call_pure_packed: expected a function name or ExternFunc, got "
                        f"{type(func).__name__}")
    return Call(Op.get("relax.call_pure_packed"), [func, *args],
                sinfo_args=_sinfo_args(sinfo_args, "call_pure_packed"))


def call_tir_inplace(gvar, args, inplace_indices, out_sinfo, tir_vars=None):
    """Calls the PrimFunc ``gvar`` on ``args``; output ``i`` is the argument
    ``inplace_indices[i]``, which the kernel overwrites, or (index -1) a new tensor. The
    kernel receives the inputs, then the new outputs only.

    >>> from rvm.relax.expr import Var
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> call = call_tir_inplace(GlobalVar("relu_"), (x,), [0], TensorStructInfo((4,), "float32"))
    >>> call.op.name, call.attrs["inplace_indices"]
    ('relax.call_tir_inplace', (0,))
    """
    if not isinstance(gvar, GlobalVar):
        raise TypeError(f"call_tir_inplace: expected the GlobalVar of a PrimFunc, got "
                        f"{type(gvar).__name__}")
    if isinstance(inplace_indices, int):
        inplace_indices = [inplace_indices]
    if not isinstance(inplace_indices, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in inplace_indices):
        raise TypeError(f"call_tir_inplace: inplace_indices must be a list of ints, got "
                        f"{inplace_indices!r}")
    call_args = [gvar, _args_tuple(args, "call_tir_inplace")]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, RelaxExpr) else ShapeExpr(tir_vars))
    return Call(Op.get("relax.call_tir_inplace"), call_args,
                {"inplace_indices": tuple(inplace_indices)},
                sinfo_args=[_out_sinfo(out_sinfo, "call_tir_inplace")])


def make_closure(func, args):
    """A closure of the Relax function ``func`` (a GlobalVar) with ``args`` bound as its first
    arguments (``relax.make_closure``).

    >>> from rvm.relax.expr import Var
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> make_closure(GlobalVar("f"), (x,)).op.name
    'relax.make_closure'
    """
    if not isinstance(func, GlobalVar):
        raise TypeError(f"make_closure: expected the GlobalVar of a Relax function, got "
                        f"{type(func).__name__}")
    return Call(Op.get("relax.make_closure"), [func, _args_tuple(args, "make_closure")])


def invoke_closure(closure, args, sinfo_args):
    """Calls ``closure`` (a value made by make_closure, or any function value) on ``args``;
    the result has struct info ``sinfo_args`` (``relax.invoke_closure``, impure).

    >>> from rvm.relax.expr import Var
    >>> from rvm.relax.struct_info import ObjectStructInfo
    >>> clo = Var("clo", ObjectStructInfo())
    >>> invoke_closure(clo, (), TensorStructInfo((4,), "float32")).op.name
    'relax.invoke_closure'
    """
    sinfos = _sinfo_args(sinfo_args, "invoke_closure")
    if len(sinfos) != 1:
        raise TypeError(f"invoke_closure: sinfo_args must be one StructInfo, got {len(sinfos)}")
    return Call(Op.get("relax.invoke_closure"), [closure, _args_tuple(args, "invoke_closure")],
                sinfo_args=sinfos)


def invoke_pure_closure(closure, args, sinfo_args):
    """``invoke_closure`` declared pure (``relax.invoke_pure_closure``), so it may appear in a
    dataflow block; it runs as invoke_closure does."""
    sinfos = _sinfo_args(sinfo_args, "invoke_pure_closure")
    if len(sinfos) != 1:
        raise TypeError(f"invoke_pure_closure: sinfo_args must be one StructInfo, got "
                        f"{len(sinfos)}")
    return Call(Op.get("relax.invoke_pure_closure"),
                [closure, _args_tuple(args, "invoke_pure_closure")], sinfo_args=sinfos)


def _infer_dps(name, callee_type):
    def infer(call, ctx):
        max_args = 2 if name == "relax.call_dps_packed" else 3
        if not 2 <= len(call.args) <= max_args:
            raise ValueError(f"{name} expects (callee, args tuple"
                             f"{', tir_vars' if max_args == 3 else ''}), "
                             f"got {len(call.args)} argument(s)")
        callee, args = call.args[0], call.args[1]
        if not isinstance(callee, callee_type):
            raise ValueError(f"{name}: callee must be a {callee_type.__name__}, got "
                             f"{type(callee).__name__}")
        if isinstance(callee, GlobalVar) and ctx is not None:
            ctx.check_global_var(callee, name)
        if not isinstance(args.struct_info_, TupleStructInfo):
            raise ValueError(f"{name}: arguments must be a tuple, got struct info "
                             f"{args.struct_info_!r}")
        if len(call.args) == 3 and not isinstance(call.args[2].struct_info_, ShapeStructInfo):
            raise ValueError(f"{name}: tir_vars must be a shape expression, got "
                             f"{type(call.args[2]).__name__}")
        if len(call.sinfo_args) != 1:
            raise ValueError(f"{name} expects exactly one output struct info, got "
                             f"{len(call.sinfo_args)}")
        out = call.sinfo_args[0]
        fields = out.fields if isinstance(out, TupleStructInfo) else [out]
        for s in fields:
            if not isinstance(s, TensorStructInfo):
                raise ValueError(f"{name}: outputs must be tensors, got {s!r}")
        if name == "relax.call_tir_inplace":
            _check_inplace(call, fields, args.struct_info_.fields)
        return out

    return infer


def _check_inplace(call, outputs, inputs):
    indices = (call.attrs or {}).get("inplace_indices")
    if indices is None:
        raise ValueError("relax.call_tir_inplace: missing the attribute 'inplace_indices'")
    if len(indices) != len(outputs):
        raise ValueError(f"relax.call_tir_inplace: {len(outputs)} output(s) but "
                         f"{len(indices)} inplace index(es) {list(indices)}")
    used = set()
    for out_index, (index, out) in enumerate(zip(indices, outputs)):
        if index == -1:
            continue
        if not 0 <= index < len(inputs):
            raise ValueError(f"relax.call_tir_inplace: inplace index {index} is out of range "
                             f"for {len(inputs)} argument(s)")
        if index in used:
            raise ValueError(f"relax.call_tir_inplace: argument {index} is the output "
                             "twice; each inplace index must be distinct")
        used.add(index)
        given = inputs[index]
        if not isinstance(given, TensorStructInfo) or not structural_equal(
                given, out, map_free_vars=False):
            raise ValueError(f"relax.call_tir_inplace: output {out_index} is argument {index} "
                             f"overwritten in place, so it must have that argument's struct "
                             f"info {given!r}; got {out!r}")


def _infer_make_closure(call, ctx):
    func = call.args[0]
    if not isinstance(func, GlobalVar):
        raise ValueError(f"relax.make_closure: the function must be a GlobalVar, got "
                         f"{type(func).__name__}")
    if not isinstance(call.args[1].struct_info_, TupleStructInfo):
        raise ValueError("relax.make_closure: the bound arguments must be a tuple")
    sinfo = func.struct_info_
    if isinstance(sinfo, FuncStructInfo) and sinfo.params is not None:
        bound = len(call.args[1].struct_info_.fields)
        if bound > len(sinfo.params):
            raise ValueError(f"relax.make_closure: {bound} bound argument(s) for a function of "
                             f"{len(sinfo.params)} parameter(s)")
        return FuncStructInfo(list(sinfo.params[bound:]), sinfo.ret, sinfo.purity)
    return ObjectStructInfo()


def _infer_invoke_closure(call, ctx):
    name = call.op.name
    if len(call.sinfo_args) != 1:
        raise ValueError(f"{name} expects one sinfo_args entry, got "
                         f"{len(call.sinfo_args)}")
    if not isinstance(call.args[1].struct_info_, TupleStructInfo):
        raise ValueError(f"{name}: the arguments must be a tuple")
    if isinstance(call.args[0].struct_info_, (TensorStructInfo, ShapeStructInfo,
                                              TupleStructInfo)):
        raise ValueError(f"{name}: expected a closure, got a value of struct "
                         f"info {call.args[0].struct_info_!r}")
    return call.sinfo_args[0]


def _infer_pure_packed(call, ctx):
    if not call.args or not isinstance(call.args[0], ExternFunc):
        raise ValueError("relax.call_pure_packed expects an ExternFunc as its first argument")
    if len(call.sinfo_args) > 1:
        raise ValueError(f"relax.call_pure_packed expects at most one sinfo_args entry, got "
                         f"{len(call.sinfo_args)}")
    return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()


register_op("relax.call_tir", _infer_dps("relax.call_tir", GlobalVar),
            description="call a PrimFunc in destination passing style")
register_op("relax.call_tir_inplace", _infer_dps("relax.call_tir_inplace", GlobalVar),
            description="call a PrimFunc that overwrites some of its arguments")
register_op("relax.make_closure", _infer_make_closure, num_inputs=2,
            description="bind the first arguments of a Relax function")
register_op("relax.invoke_closure", _infer_invoke_closure, purity=False, num_inputs=2,
            description="call a closure")
register_op("relax.invoke_pure_closure", _infer_invoke_closure, num_inputs=2,
            description="call a closure declared pure")
register_op("relax.call_dps_packed", _infer_dps("relax.call_dps_packed", ExternFunc),
            description="call a packed function in destination passing style")
register_op("relax.call_pure_packed", _infer_pure_packed,
            description="call a packed function declared pure")
