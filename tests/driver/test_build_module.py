"""rvm.build: targets, caching, argument errors, compile errors, call_packed from kernels."""
import time
import uuid

import numpy as np
import pytest

import rvm
from rvm import te, tir
from rvm.codegen.python.kernels import PythonKernelLibrary
from rvm.driver.build_module import build, build_kernels, normalize_target
from rvm.ir.expr import BaseFunc
from rvm.ir.module import IRModule
from rvm.runtime.compiler import CompileError, Compiler, default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.runtime.module import load_module_from_bytes

TARGETS = ["c", "python"]


def _matmul(scale=1.0):
    n, m, l = te.var("n", "int64"), te.var("m", "int64"), te.var("l", "int64")
    A, B = te.placeholder((n, l), name="A"), te.placeholder((l, m), name="B")
    k = te.reduce_axis((0, l), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j] * scale, axis=k), name="C")
    return te.create_prim_func([A, B, C])


@pytest.fixture(scope="module", params=TARGETS)
def matmul(request):
    return build(_matmul(), request.param)


def test_targets_give_their_modules():
    assert isinstance(build(_matmul(), "c"), KernelLibrary)
    assert isinstance(build(_matmul(), "llvm --num-cores=1"), KernelLibrary)
    lib = build(_matmul(), "python")
    assert isinstance(lib, PythonKernelLibrary) and lib.type_key == "python_kernels"
    assert "C_local" in lib.get_source()
    assert normalize_target(None) == "c"
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        build(_matmul(), "cuda")


def test_only_prim_funcs():
    with pytest.raises(ValueError, match="relax.build"):
        build(IRModule({"main": _matmul(), "f": BaseFunc()}))
    with pytest.raises(TypeError, match="PrimFunc or an IRModule"):
        build("main")


def test_second_build_hits_the_cache():
    func = _matmul(scale=1.0 + (uuid.uuid4().int % 1000) / 1e6)  # a source never built before
    compiler = default_compiler()
    before = compiler.invocations
    start = time.perf_counter()
    first = build(func, "c")
    first_time = time.perf_counter() - start
    assert compiler.invocations == before + 1 and not first.from_cache
    second_times = []
    for _ in range(3):  # the best of three rebuilds, against scheduling noise
        start = time.perf_counter()
        second = build(func, "c")
        second_times.append(time.perf_counter() - start)
        assert compiler.invocations == before + 1 and second.from_cache
    assert min(second_times) < 0.1 * first_time, (first_time, second_times)


def test_matmul_runs(matmul):
    a, b = np.ones((2, 3), "float32"), np.ones((3, 4), "float32")
    c = rvm.nd.empty((2, 4), "float32")
    matmul["main"](rvm.nd.array(a), rvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b)


@pytest.mark.parametrize("args, error, pattern", [
    (lambda: [np.ones((2, 3), "float32"), np.ones((3, 4), "float32")], ValueError,
     r"main: expected 3 arguments \(A, B, C\), got 2"),
    (lambda: [np.ones((2, 3), "float32"), np.ones((3, 4, 1), "float32"),
              np.ones((2, 4), "float32")], ValueError, r"main: parameter 'B' .*rank 2.*rank 3"),
    (lambda: [np.ones((2, 3), "float32"), np.ones((3, 4), "float64"),
              np.ones((2, 4), "float32")], TypeError, r"main: parameter 'B' .*got dtype float64"),
    (lambda: [np.ones((2, 3), "float32"), np.ones((5, 4), "float32"),
              np.ones((2, 4), "float32")], ValueError,
     r"main: parameter 'B' expects shape float32\[l, m\], got 5 on axis 0 \(expected l = 3\)"),
    (lambda: [np.ones((2, 3), "float32"), np.ones((3, 4), "float32"),
              np.ones((2, 5), "float32")], ValueError, r"main: parameter 'C' .*m = 4"),
    (lambda: [np.ones((2, 3), "float32"), 7, np.ones((2, 4), "float32")], TypeError,
     r"main: parameter 'B' expects a tensor"),
])
def test_argument_errors_name_kernel_and_parameter(matmul, args, error, pattern):
    with pytest.raises(error, match=pattern):
        matmul["main"](*args())


def test_constant_shape_mismatch(matmul):
    A = te.placeholder((4,), name="A")
    lib = build(te.create_prim_func([A, te.compute((4,), lambda i: A[i] + 1.0, name="B")]),
                matmul.type_key.split("_")[0])
    with pytest.raises(ValueError, match=r"main: parameter 'A' .*got 3 on axis 0 \(expected 4\)"):
        lib["main"](np.ones(3, "float32"), np.ones(4, "float32"))


def test_compile_error_shows_the_offending_lines():
    A = te.placeholder((4,), name="A")
    bad = te.compute((4,), lambda i: tir.call_extern("float32", "not a function", A[i]),
                     name="B")
    with pytest.raises(CompileError) as info:
        build(te.create_prim_func([A, bad]), "c")
    message = str(info.value)
    assert "offending source lines" in message
    assert any(line.startswith(">") and "not a function" in line
               for line in message.splitlines())


def test_missing_compiler_falls_back_to_python(tmp_path):
    with pytest.warns(RuntimeWarning, match="python reference"):
        lib = build(_matmul(), "c", compiler=Compiler(cc="no-such-cc-rvm", cache_dir=tmp_path))
    assert isinstance(lib, PythonKernelLibrary)


def test_kernel_library_roundtrips_through_bytes():
    lib = build(_matmul(), "c")
    loaded = load_module_from_bytes("c_kernels", lib.save_to_bytes())
    assert loaded.get_source() == lib.get_source()
    c = np.zeros((1, 1), "float32")
    loaded["main"](np.full((1, 2), 2, "float32"), np.full((2, 1), 3, "float32"), c)
    assert c[0, 0] == 12


def test_time_evaluator(matmul):
    a, b, c = (rvm.nd.array(np.ones(s, "float32")) for s in ((4, 4), (4, 4), (4, 4)))
    result = matmul.time_evaluator("main", rvm.cpu(), number=2, repeat=2)(a, b, c)
    assert len(result.results) == 2 and result.mean > 0


def test_build_kernels_takes_the_prim_funcs_of_a_mixed_module():
    lib = build_kernels(IRModule({"mm": _matmul(), "main": BaseFunc()}), "python")
    assert lib.function_names() == ["mm"]
    assert build_kernels(IRModule({"main": BaseFunc()})) is None
