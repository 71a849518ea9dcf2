"""rvm.ir: the IR core shared by TIR and Relax: nodes, modules, structural equality, and the
pass infrastructure (``rvm.ir.transform``).

This package is a facade; the definitions live in its modules.
"""
from rvm.ir import transform
from rvm.ir.expr import BaseExpr, BaseFunc, GlobalVar, PrimExpr, RelaxExpr
from rvm.ir.global_info import VDevice
from rvm.ir.json_io import load_json, save_json
from rvm.ir.module import IRModule, register_printer
from rvm.ir.node import Node, Span
from rvm.ir.op import Op, register_op_attr
from rvm.ir.type import FuncType, PointerType, PrimType, TupleType, Type
from rvm.ir.base import (
    assert_structural_equal, get_first_structural_mismatch, structural_equal, structural_hash,
)
from rvm.runtime.object_path import ObjectPath

__all__ = [
    "BaseExpr", "BaseFunc", "FuncType", "PointerType", "PrimType", "TupleType", "Type", "GlobalVar", "IRModule", "Node", "ObjectPath", "Op", "PrimExpr", "RelaxExpr", "Span", "VDevice",
    "assert_structural_equal", "get_first_structural_mismatch", "load_json", "register_op_attr", "register_printer", "save_json", "structural_equal",
    "structural_hash", "transform",
]
import rvm.script.printer  # noqa: E402,F401  (installs the script printer behind script()/show()/repr)

