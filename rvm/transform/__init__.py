"""rvm.transform: passes over IRModules, the pass infrastructure, and the build pipeline.

This package is a facade; the definitions live in its modules.
"""
from rvm.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from rvm.transform.attach_global_symbol import AttachGlobalSymbol
from rvm.transform.bind_params import BindParams
from rvm.transform.call_tir_rewrite import CallTIRRewrite
from rvm.transform.canonicalize_bindings import CanonicalizeBindings
from rvm.transform.dead_code_elimination import DeadCodeElimination
from rvm.transform.fold_constant import (
    FoldConstant, register_call_tir_evaluator, register_fold_evaluator,
)
from rvm.relax.dpl.fusion_pattern import FusionPattern, PatternCheckContext
from rvm.transform.fuse_ops import FuseOps
from rvm.transform.fuse_ops_by_pattern import FuseOpsByPattern
from rvm.transform.fuse_tir import FuseTIR
from rvm.transform.fuse_transpose_matmul import FuseTransposeMatmul
from rvm.transform.function_pass import (
    DataflowBlockPass, FunctionPass, dataflowblock_pass, function_pass,
)
from rvm.transform.kill_after_last_use import KillAfterLastUse
from rvm.transform.merge_composite_functions import MergeCompositeFunctions
from rvm.transform.legalize_ops import LEGALIZE_RULES, LegalizeOps, register_legalize
from rvm.transform.pass_infra import (
    ModulePass, Pass, PassContext, PassInfo, PassInstrument, PrintIR, Sequential, get_pass,
    get_pipeline, module_pass, register_pass, register_pipeline,
)
from rvm.transform.pipeline import default_build_pipeline
from rvm.transform.run_codegen import RunCodegen
from rvm.transform.static_plan_block_memory import StaticPlanBlockMemory
from rvm.transform.to_non_dataflow import ToNonDataflow
from rvm.transform.vm_builtin_lower import VMBuiltinLower
from rvm.transform.vm_shape_lower import VMShapeLower

__all__ = [
    "AnnotateTIROpPattern", "AttachGlobalSymbol", "BindParams", "CallTIRRewrite",
    "CanonicalizeBindings",
    "DataflowBlockPass", "DeadCodeElimination", "FoldConstant", "FunctionPass", "FuseOps",
    "FuseOpsByPattern", "FuseTIR", "FuseTransposeMatmul", "FusionPattern", "KillAfterLastUse",
    "LEGALIZE_RULES", "LegalizeOps", "MergeCompositeFunctions",
    "ModulePass", "Pass", "PassContext", "PatternCheckContext",
    "PassInfo", "PassInstrument", "PrintIR", "RunCodegen", "Sequential",
    "StaticPlanBlockMemory", "ToNonDataflow", "VMBuiltinLower", "VMShapeLower",
    "dataflowblock_pass", "default_build_pipeline", "function_pass", "get_pass", "get_pipeline",
    "module_pass", "register_call_tir_evaluator", "register_fold_evaluator",
    "register_legalize", "register_pass", "register_pipeline",
]
