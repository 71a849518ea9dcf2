"""A checker of the lowered form the VM codegen accepts (default_build_pipeline's docstring)."""
from rvm.ir.expr import GlobalVar
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, Constant, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple,
    TupleGetItem, Var,
)
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.tir.expr import FloatImm, IntImm

_VM_OPS = {"relax.vm.alloc_storage", "relax.vm.alloc_tensor", "relax.vm.kill_object",
           "relax.null_value", "relax.call_builtin_with_ctx"}


def _constant_shape(expr):
    return isinstance(expr, ShapeExpr) and all(isinstance(d, IntImm) for d in expr.values)


def _check_arg(arg, where):
    if isinstance(arg, Tuple):
        for field in arg.fields:
            _check_arg(field, where)
        return
    if isinstance(arg, PrimValue):
        assert isinstance(arg.value, (IntImm, FloatImm)), f"{where}: symbolic PrimValue {arg}"
        return
    if isinstance(arg, ShapeExpr):
        assert _constant_shape(arg), f"{where}: symbolic shape {arg}"
        return
    assert isinstance(arg, (Var, Constant, StringImm, DataTypeImm, GlobalVar)), \
        f"{where}: argument {type(arg).__name__} is not allowed"


def _check_value(value, mod, where):
    if isinstance(value, Call):
        op = value.op
        args = value.args
        if isinstance(op, Op):
            assert op.name in _VM_OPS, f"{where}: operator {op.name} left"
            if op.name == "relax.call_builtin_with_ctx":
                assert isinstance(args[0], ExternFunc) and isinstance(args[1], Tuple)
                args = args[1:]
        elif isinstance(op, GlobalVar):
            assert op.name_hint in mod, f"{where}: unknown function {op.name_hint}"
        else:
            assert isinstance(op, (ExternFunc, Var)), f"{where}: callee {type(op).__name__}"
        for arg in args:
            _check_arg(arg, where)
    elif isinstance(value, If):
        assert isinstance(value.cond, Var), f"{where}: If condition must be a Var"
        _check_seq(value.true_branch, mod, where + " (then)")
        _check_seq(value.false_branch, mod, where + " (else)")
    elif isinstance(value, ShapeExpr):
        assert _constant_shape(value), f"{where}: symbolic shape {value}"
    elif isinstance(value, PrimValue):
        _check_arg(value, where)
    elif isinstance(value, Tuple):
        _check_arg(value, where)
    else:
        assert isinstance(value, (TupleGetItem, Constant, StringImm, DataTypeImm, Var,
                                  GlobalVar)), f"{where}: value {type(value).__name__}"


def _check_seq(seq, mod, where):
    assert isinstance(seq, SeqExpr), f"{where}: body must be a SeqExpr"
    for block in seq.blocks:
        assert isinstance(block, BindingBlock) and not isinstance(block, DataflowBlock), \
            f"{where}: dataflow block left"
        for binding in block.bindings:
            assert not isinstance(binding, MatchCast), f"{where}: match_cast left"
            assert isinstance(binding, VarBinding)
            _check_value(binding.value, mod, f"{where}: '{binding.var.name_hint}'")
    assert isinstance(seq.body, Var), f"{where}: the result must be a Var"


def check_contract(mod):
    """Asserts that every Relax function of ``mod`` is in the lowered form."""
    for gv, func in mod.functions.items():
        if isinstance(func, Function):
            assert func.get_attr("global_symbol") == gv.name_hint
            _check_seq(func.body, mod, gv.name_hint)
