"""The module paths and names a TVM user reaches for exist (``tvm`` replaced by ``rvm``)."""
import importlib
import pathlib

import pytest

import rvm


NAMES = [
    ("rvm", "IRModule"), ("rvm", "build"), ("rvm", "compile"), ("rvm", "cpu"),
    ("rvm", "device"), ("rvm", "DataType"), ("rvm", "register_func"),
    ("rvm", "get_global_func"), ("rvm.error", "RVMError"), ("rvm.error", "DiagnosticError"),
    ("rvm.target", "Target"), ("rvm.testing", "assert_allclose"), ("rvm.testing", "main"),
    ("rvm.ir", "IRModule"), ("rvm.ir", "structural_hash"), ("rvm.ir", "assert_structural_equal"),
    ("rvm.ir.transform", "PassContext"), ("rvm.ir.transform", "Sequential"),
    ("rvm.relax.transform", "LegalizeOps"),
    ("rvm.relax.transform", "BindParams"), ("rvm.relax.transform", "FunctionPass"),
    ("rvm.tir.transform", "FlattenBuffer"), ("rvm.relax", "build"),
    ("rvm.relax", "VirtualMachine"), ("rvm.script", "from_source"),
    ("rvm.script.parser.ir", "ir_module"), ("rvm.script.parser.relax", "function"),
    ("rvm.script.parser.tir", "prim_func"),
    ("rvm.relax.transform", "FuseOpsByPattern"), ("rvm.relax.transform", "FusionPattern"),
    ("rvm.relax.transform", "PatternCheckContext"),
    ("rvm.relax.transform", "MergeCompositeFunctions"), ("rvm.relax.transform", "RunCodegen"),
    ("rvm.relax.dpl", "is_op"), ("rvm.relax.dpl", "wildcard"), ("rvm.relax.dpl", "rewrite_call"),
    ("rvm.relax.backend.pattern_registry", "get_patterns_with_prefix"),
    ("rvm.relax.backend.pattern_registry", "register_patterns"),
    ("rvm.relax.analysis", "get_var2val"), ("rvm.runtime", "Module"),
    ("rvm.runtime", "csource_module_create"), ("rvm.runtime", "register_module_loader"),
    ("rvm.relax.frontend.torch", "from_fx"), ("rvm.relax.frontend.onnx", "from_onnx"),
    ("rvm.meta_schedule.database", "JSONDatabase"),
    ("rvm.meta_schedule.runner", "LocalRunner"), ("rvm.meta_schedule.builder", "LocalBuilder"),
    ("rvm.meta_schedule.measure_callback", "AddToDatabase"),
    ("rvm.meta_schedule.measure_callback", "UpdateCostModel"),
    ("rvm.meta_schedule.postproc", "RewriteParallelVectorizeUnroll"),
    ("rvm.meta_schedule.mutator", "MutateTileSize"),
    ("rvm.meta_schedule.task_scheduler", "GradientBased"),
]


@pytest.mark.parametrize("path, name", NAMES)
def test_import_path_has_name(path, name):
    assert hasattr(importlib.import_module(path), name)


@pytest.mark.parametrize("path", sorted({path for path, _ in NAMES}))
def test_import_path_is_a_real_module(path):
    """A TVM path is where the code lives: the module imported under that name is the file of
    that name, not another module put in its place."""
    module = importlib.import_module(path)
    assert module.__name__ == path
    file = pathlib.Path(module.__file__)
    parts = file.with_suffix("").parts if file.name != "__init__.py" else file.parent.parts
    assert parts[-len(path.split(".")):] == tuple(path.split("."))


def test_top_level_names():
    from rvm.ir.module import IRModule

    assert rvm.IRModule is IRModule
    assert rvm.relax.transform is importlib.import_module("rvm.relax.transform")
    assert rvm.relax.transform.LegalizeOps.__module__ == "rvm.relax.transform.legalize_ops"
    assert rvm.transform is rvm.ir.transform  # TVM's tvm.transform
    assert rvm.tir.transform.Simplify.__module__ == "rvm.tir.transform.simplify"


def test_script_parser_paths_are_the_same_namespaces():
    """``from rvm.script.parser import relax as R`` is the very namespace of rvm.script."""
    from rvm.script import ir, relax, tir
    from rvm.script.parser import ir as I, relax as R, tir as T

    assert I is ir and R is relax and T is tir


def test_error_hierarchy():
    """RVMError is the base of rvm's exceptions; those meaning a standard error keep its base."""
    from rvm.bytecode.errors import ExecutableFormatError
    from rvm.runtime.compiler import CompileError
    from rvm.script.parser.diagnostics import ParseError

    assert issubclass(rvm.error.DiagnosticError, rvm.error.RVMError)
    assert issubclass(ParseError, rvm.error.DiagnosticError) and issubclass(ParseError,
                                                                            SyntaxError)
    assert issubclass(ExecutableFormatError, rvm.error.RVMError)
    assert issubclass(ExecutableFormatError, ValueError)
    assert issubclass(CompileError, rvm.error.RVMError)
    assert issubclass(rvm.error.OpNotImplemented, NotImplementedError)
    assert rvm.RVMError is rvm.error.RVMError


def test_script_errors_are_diagnostic_errors():
    from rvm.script import from_source

    with pytest.raises(rvm.error.DiagnosticError, match="needs a struct info annotation"):
        from_source("@R.function\ndef f(x):\n    return x\n")
