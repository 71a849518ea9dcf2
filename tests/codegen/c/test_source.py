"""The emitted C: loop pragmas, restrict, local accumulators, allocations, unsupported input."""
import pytest

from rvm import te, tir
from rvm.codegen.c.source import CodegenError, render_c_source
from rvm.codegen.c.target import render_c
from rvm.tir.stmt import ForKind
from rvm.tir.transform.pipeline import lower_module
from tests.codegen.kernel_cases import set_loop_kind


def _source(func, use_openmp=True):
    return render_c(lower_module(func), use_openmp)


def _elementwise(shape=(64, 8)):
    A = te.placeholder(shape, name="A")
    return te.create_prim_func([A, te.compute(shape, lambda i, j: A[i, j] * 2.0, name="B")])


def test_one_exported_symbol_per_function_with_restrict_pointers():
    src = _source(_elementwise())
    assert src.count("RVM_EXPORT int rvm_kernel_main(") == 1
    assert "float* restrict A" in src and "float* restrict B" in src


def test_no_restrict_without_noalias():
    func = _elementwise().without_attr("tir.noalias")
    assert "restrict" not in _source(func).split("rvm_kernel_main")[1]


def test_loop_kinds_become_pragmas():
    func = set_loop_kind(set_loop_kind(_elementwise(), "i", ForKind.PARALLEL), "j",
                         ForKind.VECTORIZED)
    src = _source(func)
    # a parallel loop is a region whose threads share its iterations out (see rvm.codegen.c.polls)
    assert "reduction(+:rvm_polls)" in src and "#pragma omp simd" in src
    assert "#pragma omp parallel num_threads(rvm_team_i) if(rvm_team_i > 1)" in src
    unrolled = _source(set_loop_kind(_elementwise(), "j", ForKind.UNROLLED))
    assert "#pragma GCC unroll 8" in unrolled


def test_reduction_uses_a_scalar_accumulator_with_simd_reduction():
    A = te.placeholder((16, 32), name="A")
    k = te.reduce_axis((0, 32), name="k")
    src = _source(te.create_prim_func([A, te.compute((16,), lambda i: te.sum(A[i, k], axis=k),
                                                     name="S")]))
    assert "float S_local;" in src
    assert "#pragma omp simd reduction(+:S_local)" in src


def test_large_and_symbolic_allocations_go_to_the_heap():
    n = te.var("n", "int64")
    A = te.placeholder((n,), name="A")
    T = te.compute((n,), lambda i: A[i] + 1.0, name="T")
    src = _source(te.create_prim_func([A, te.compute((n,), lambda i: T[i] * 2.0, name="B")]))
    assert "RVMBackendAllocWorkspace(rvm_ctx, " in src and "malloc(" not in src
    assert "RVMBackendFreeWorkspace(rvm_ctx, T);" in src
    small = _source(te.create_prim_func([
        te.placeholder((4,), name="X"),
        te.compute((4,), lambda i: te.compute((4,), lambda j: j * 1.0, name="U")[i] + 1.0)]))
    assert "float U[4] __attribute__((aligned(64)));" in small


def test_unsupported_dtype_is_reported():
    A = te.placeholder((4,), "float32x4", name="A")
    func = te.create_prim_func([A, te.compute((4,), lambda i: A[i], name="B")])
    with pytest.raises(CodegenError, match="float32x4"):
        _source(func)


def test_unbound_variable_is_reported():
    A = tir.decl_buffer((4,), "float32", name="A")
    i, x = tir.Var("i"), tir.Var("x")
    func = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.BufferStore(
        A, x.astype("float32"), [i])))
    with pytest.raises(ValueError, match="uses x"):
        render_c_source([("main", func)], use_openmp=False)


def test_names_are_sanitized_and_unique():
    A = tir.decl_buffer((4,), "float64", name="int")
    B = tir.decl_buffer((4,), "float64", name="int")
    E = tir.decl_buffer((4,), "float64", name="exp")
    i = tir.Var("i")
    func = tir.PrimFunc([A, B, E], tir.For(i, 0, 4, "serial", tir.BufferStore(
        B, A[i] + tir.exp(E[i]), [i])))
    src = render_c_source([("weird-name", func)], use_openmp=False)
    assert "rvm_kernel_weird_name(" in src
    assert "double* v_int = " in src and "double* v_int_1 = " in src
    assert "v_int_1[i] = (v_int[i] + exp(v_exp[i]));" in src


def test_clashing_symbols_are_reported():
    A = tir.decl_buffer((4,), "float32", name="Ä")
    i = tir.Var("i")
    func = tir.PrimFunc([A], tir.For(i, 0, 4, "serial", tir.BufferStore(A, A[i], [i])))
    assert "float* _ = " in render_c_source([("f", func)], use_openmp=False)
    with pytest.raises(CodegenError, match="'a-b' and 'a_b' would both be exported"):
        render_c_source([("a-b", func), ("a_b", func)], use_openmp=False)


def test_call_packed_inside_a_parallel_loop_is_reported():
    # Found by the TIR fuzzer: the refusal itself raised NameError (CodegenError unimported).
    from rvm.script import tir as T

    @T.prim_func
    def kernel(x: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        for i in T.parallel(8):
            T.evaluate(T.call_packed("env.peek", X))

    with pytest.raises(CodegenError, match="kernel 'kernel': call_packed inside a parallel or "
                       "vectorized loop"):
        render_c_source([("kernel", kernel)], use_openmp=True)


def test_call_packed_inside_a_vectorized_loop_is_reported():
    # Found by the TIR fuzzer: the call's error path returned from inside `#pragma omp simd`,
    # C that gcc refuses ("invalid branch to/from OpenMP structured block").
    from rvm.script import tir as T

    @T.prim_func
    def kernel(x: T.handle):
        X = T.match_buffer(x, (8,), "float32")
        for i in T.vectorized(8):
            T.evaluate(T.call_packed("env.peek", X))

    with pytest.raises(CodegenError, match="kernel 'kernel': call_packed inside a parallel or "
                       "vectorized loop"):
        render_c_source([("kernel", kernel)], use_openmp=False)


@pytest.mark.parametrize("make, message", [
    (lambda x: tir.Call("bool", "tir.isnan", [x]), r"tir.isnan needs float arguments, got int64"),
    (lambda x: tir.Call("float32", "tir.if_then_else", [x > 0, tir.const(1.0, "float32")]),
     r"tir.if_then_else takes 3 arguments, got 2"),
    (lambda x: tir.Call("float32", "tir.exp", [x]), r"tir.exp needs float arguments, got int64"),
])
def test_intrinsic_calls_of_the_wrong_form_are_reported(make, message):
    # Found by the TIR fuzzer: isnan of an integer was emitted as C gcc rejects, and a
    # two-argument if_then_else raised IndexError inside the code generator.
    A = tir.decl_buffer((4,), "float32", name="A")
    i = tir.Var("i", "int64")
    value = make(i)
    stored = value if value.dtype == "float32" else tir.Cast("float32", value)
    func = tir.PrimFunc([A], tir.For(i, tir.const(0, "int64"), tir.const(4, "int64"), "serial",
                                     tir.BufferStore(A, stored, [i])))
    with pytest.raises(CodegenError, match=message):
        render_c_source([("main", func)], use_openmp=False)


def test_a_heap_allocation_inside_a_vectorized_loop_fails_through_the_flag():
    # Found by the TIR fuzzer: its NULL check returned from inside `#pragma omp simd`,
    # which gcc refuses ("invalid branch to/from OpenMP structured block").
    from rvm.runtime.compiler import default_compiler
    n = tir.Var("n", "int64")
    A = tir.decl_buffer((8,), "float32", name="A")
    i = tir.Var("i", "int64")
    scratch = tir.Var("scratch", "handle")
    body = tir.Allocate(scratch, "float32", [n], tir.const(True, "bool"),
                        tir.BufferStore(A, tir.const(1.0, "float32"), [i]))
    func = tir.PrimFunc([A, n], tir.For(i, tir.const(0, "int64"), tir.const(8, "int64"),
                                        "vectorized", body))
    src = render_c_source([("main", func)], use_openmp=False)
    assert "rvm_oob_hit(&rvm_oob, 1)" in src
    default_compiler().compile(src)  # gcc accepts it
