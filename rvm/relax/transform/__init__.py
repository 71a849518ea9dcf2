"""rvm.relax.transform: the Relax passes and the build pipeline (the pass infrastructure,
``PassContext``, ``Sequential``, ``module_pass``, is ``rvm.ir.transform``).

This package is a facade; the definitions live in its modules. ``MetaScheduleApplyDatabase``,
which TVM keeps here, is defined by the tuner above this layer and loaded on first use.
Importing it registers the example codegens RunCodegen calls (``relax.ext.ccompiler``,
``relax.ext.examplejson``).
"""
import importlib

# A registration by a higher layer: the example codegens RunCodegen calls.
from rvm.codegen import byoc as _byoc  # noqa: F401  (relax.ext.ccompiler/examplejson)

from rvm.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from rvm.relax.transform.attach_attr_layout_free_buffers import AttachAttrLayoutFreeBuffers
from rvm.relax.transform.attach_global_symbol import AttachGlobalSymbol
from rvm.relax.transform.bind_params import BindParams
from rvm.relax.transform.bind_symbolic_vars import BindSymbolicVars
from rvm.relax.transform.call_tir_rewrite import CallTIRRewrite
from rvm.relax.transform.canonicalize_bindings import CanonicalizeBindings
from rvm.relax.transform.dead_code_elimination import DeadCodeElimination
from rvm.relax.transform.decompose_ops_for_inference import DecomposeOpsForInference
from rvm.relax.transform.fold_constant import FoldConstant
from rvm.relax.dpl.fusion_pattern import FusionPattern, PatternCheckContext
from rvm.relax.transform.fuse_ops import FuseOps
from rvm.relax.transform.fuse_ops_by_pattern import FuseOpsByPattern
from rvm.relax.transform.fuse_tir import FuseTIR
from rvm.relax.transform.fuse_transpose_matmul import FuseTransposeMatmul
from rvm.relax.transform.function_pass import (
    DataflowBlockPass, FunctionPass, dataflowblock_pass, function_pass,
)
from rvm.relax.transform.kill_after_last_use import KillAfterLastUse
from rvm.relax.transform.merge_composite_functions import MergeCompositeFunctions
from rvm.relax.transform.legalize_ops import LEGALIZE_RULES, LegalizeOps, register_legalize
from rvm.relax.transform.pipeline import default_build_pipeline
from rvm.relax.transform.rewrite_dataflow_reshape import RewriteDataflowReshape
from rvm.relax.transform.run_codegen import RunCodegen
from rvm.relax.transform.split_layout_rewrite_preproc import SplitLayoutRewritePreproc
from rvm.relax.transform.static_plan_block_memory import StaticPlanBlockMemory
from rvm.relax.transform.to_non_dataflow import ToNonDataflow
from rvm.relax.transform.vm_builtin_lower import VMBuiltinLower
from rvm.relax.transform.vm_shape_lower import VMShapeLower

__all__ = [
    "AnnotateTIROpPattern", "AttachAttrLayoutFreeBuffers", "AttachGlobalSymbol", "BindParams",
    "BindSymbolicVars",
    "CallTIRRewrite", "CanonicalizeBindings", "DataflowBlockPass", "DeadCodeElimination",
    "DecomposeOpsForInference",
    "FoldConstant", "FunctionPass", "FuseOps", "FuseOpsByPattern", "FuseTIR",
    "FuseTransposeMatmul", "FusionPattern", "KillAfterLastUse", "LEGALIZE_RULES",
    "LegalizeOps", "MergeCompositeFunctions", "PatternCheckContext", "RewriteDataflowReshape",
    "RunCodegen",
    "SplitLayoutRewritePreproc", "StaticPlanBlockMemory", "ToNonDataflow", "VMBuiltinLower",
    "VMShapeLower", "dataflowblock_pass", "default_build_pipeline", "function_pass",
    "register_legalize",
]

def __getattr__(name):
    if name == "MetaScheduleApplyDatabase":
        module = importlib.import_module("rvm.meta_schedule.apply_database")
        return module.MetaScheduleApplyDatabase
    raise AttributeError(f"module 'rvm.relax.transform' has no attribute {name!r}")
