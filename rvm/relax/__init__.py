"""rvm.relax: the Relax IR (graph-level functions), its builder, operators and analyses.

This package is a facade; the definitions live in its modules. The build and
run side (``build``, ``VirtualMachine``, ``ExecBuilder``, ``Executable``,
``transform``) and the importers (``frontend``) are loaded on first use, since those
layers import this one.
"""
import importlib

from rvm.ir.expr import GlobalVar
from rvm.relax import analysis, backend, dpl, expr_functor, op
from rvm.relax.binding import (
    Binding, BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding,
)
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import (
    Call, Constant, DataflowVar, DataTypeImm, ExternFunc, If, PrimValue, RelaxExpr, ShapeExpr,
    StringImm, Tuple, TupleGetItem, Var, const, get_struct_info,
)
from rvm.relax.expr_functor import ExprMutator, ExprVisitor
from rvm.relax.function import Function
from rvm.relax.ty import (
    FuncType, ObjectType, PackedFuncType, PrimType, ShapeType, TensorType, TupleType, Type,
)
from rvm.relax.op.base import (
    call_dps_packed, call_packed, call_pure_packed, call_tir, call_tir_inplace,
)
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo,
)

Expr = RelaxExpr

__all__ = [
    "FuncType", "ObjectType", "PackedFuncType", "PrimType", "ShapeType", "TensorType",
    "TupleType", "Type",
    "Binding", "BindingBlock", "BlockBuilder", "Call", "Constant", "DataTypeImm", "DataflowBlock",
    "DataflowVar", "Expr", "ExprMutator", "ExprVisitor", "ExternFunc", "FuncStructInfo", "Function", "GlobalVar", "If",
    "MatchCast", "ObjectStructInfo", "Op", "PrimStructInfo", "PrimValue", "RelaxExpr", "SeqExpr",
    "ShapeExpr", "ShapeStructInfo", "StringImm", "StructInfo", "TensorStructInfo", "Tuple",
    "TupleGetItem", "TupleStructInfo", "Var", "VarBinding", "analysis", "backend", "dpl", "call_dps_packed", "expr_functor",
    "call_packed", "call_pure_packed", "call_tir", "call_tir_inplace", "const", "get_struct_info", "op",
]

_LAZY_ATTRS = {
    "build": ("rvm.driver.relax_build", "build"),
    "VirtualMachine": ("rvm.vm.machine", "VirtualMachine"),
    "ExecBuilder": ("rvm.bytecode.builder", "ExecBuilder"),
    "Executable": ("rvm.bytecode.executable", "Executable"),
    "get_pipeline": ("rvm.relax.transform.pipeline", "get_pipeline"),  # pipelines registered
}


def __getattr__(name):
    if name in ("transform", "frontend", "testing"):
        return importlib.import_module(f"rvm.relax.{name}")
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
    raise AttributeError(f"module 'rvm.relax' has no attribute {name!r}")
