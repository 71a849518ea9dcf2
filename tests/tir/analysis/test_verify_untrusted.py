"""verify_untrusted: each rule refuses hostile kernels (at least two per rule), and every kernel
the pipeline produces (kernel cases, a Relax model with conv2d/softmax/fused chains and a
symbolic batch, a schedule with parallel/vectorize/unroll) passes after save -> load."""
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.bytecode.serialize import undump_executable
from rvm.ir.module import IRModule
from rvm.script import ir as I, relax as R, tir as T
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.analysis.verify_untrusted import (MAX_UNROLL_EXTENT, UntrustedTIRError,
                                               verify_untrusted)
from rvm.tir.serialize import TIRFormatError, load_prim_funcs, save_prim_funcs
from rvm.tir.stmt_functor import post_order_visit
from tests.security.attack import split_kernel_library


def _kernel(make_body, dtype="float32", name="k"):
    """(name, PrimFunc) over one parameter buffer X of 8 elements."""
    x = E.Var("x", "handle")
    X = tir.decl_buffer((8,), dtype, name="X")
    return name, tir.PrimFunc([x], make_body(X), buffer_map={x: X})


def _refused(rule, *named_funcs):
    # Through the serialized form, as a loaded file gets there.
    funcs = load_prim_funcs(save_prim_funcs(named_funcs))
    with pytest.raises(UntrustedTIRError, match=f"kernel '[a-z]+': {rule}: ") as info:
        verify_untrusted(funcs)
    assert isinstance(info.value, (TIRFormatError, ValueError))
    return str(info.value)


def _i64(v):
    return tir.const(v, "int64")


def _store(X, index, value=None):
    return S.BufferStore(X, tir.const(1.0, X.dtype) if value is None else value, [index])


# ---- let-type

def test_narrowing_let_stmt_is_refused():
    t = E.Var("t", "int8")
    text = _refused("let-type", _kernel(lambda X: S.LetStmt(t, _i64(300), _store(X, t))))
    assert "let 't' of dtype int8 is bound to a value of dtype int64" in text


def test_narrowing_let_expression_is_refused():
    t = E.Var("t", "int32")
    index = E.Let(t, _i64(5), E.Cast("int64", t) + _i64(0))
    _refused("let-type", _kernel(lambda X: _store(X, index)))


def test_widening_let_is_refused_too():
    t = E.Var("t", "int64")
    _refused("let-type", _kernel(lambda X: S.LetStmt(t, tir.const(3, "int32"), _store(X, t))))


# ---- numeric-value

def test_cast_of_a_string_is_refused():
    leak = E.Cast("int64", E.StringImm("/bin/sh"))
    text = _refused("numeric-value", _kernel(lambda X: _store(X, _i64(0), E.Cast("float32",
                                                                                  leak))))
    assert "cast from handle to int64" in text


def test_cast_of_a_data_pointer_is_refused():
    def body(X):
        return _store(X, _i64(0), E.Cast("float32", E.Cast("int64", X.data)))
    _refused("numeric-value", _kernel(body))


def test_cast_to_a_handle_is_refused():
    def body(X):
        p = E.Var("p", "handle")
        Z = tir.decl_buffer((8,), "float32", name="Z", data=p)
        return S.LetStmt(p, E.Cast("handle", _i64(4096)), _store(Z, _i64(0)))
    _refused("numeric-value", _kernel(body))


def test_pointer_arithmetic_and_strings_as_values_are_refused():
    _refused("numeric-value", _kernel(lambda X: S.Evaluate(E.Add(X.data, X.data))))
    _refused("numeric-value", _kernel(lambda X: S.Evaluate(E.StringImm("x"))))


def test_vector_values_are_refused():
    _refused("numeric-value", _kernel(lambda X: S.Evaluate(E.Cast("float32x4",
                                                                   tir.const(1.0, "float32")))))


# ---- index-type

def test_float_index_is_refused():
    _refused("index-type", _kernel(lambda X: _store(X, tir.const(1.5, "float32"))))
    _refused("index-type", _kernel(lambda X: S.Evaluate(E.BufferLoad(
        X, [tir.const(True, "bool")]))))


def test_loop_bounds_of_another_dtype_are_refused():
    def body(X):
        i = E.Var("i", "int8")
        loop = S.For(i, tir.const(0, "int8"), tir.const(8, "int8"), S.ForKind.SERIAL,
                     _store(X, E.Cast("int64", i)))
        return loop.with_fields(extent=_i64(1000))
    text = _refused("index-type", _kernel(body))
    assert "loop 'i' of dtype int8 has a extent of dtype int64" in text
    _refused("index-type", _kernel(lambda X: S.For(E.Var("f", "float32"), 0.0, 8.0,
                                                   S.ForKind.SERIAL, _store(X, _i64(0)))))


# ---- buffer-type

def test_two_dtypes_over_one_parameter_memory_are_refused():
    def body(X):
        wide = tir.decl_buffer((8,), "float64", name="W", data=X.data)
        return S.DeclBuffer(wide, _store(wide, _i64(7)))
    text = _refused("buffer-type", _kernel(body))
    assert "views the memory of 'X' as float" in text and "expected one dtype per memory" in text


def test_an_allocation_viewed_as_another_dtype_is_refused():
    def body(X):
        a = E.Var("a", "handle")
        small = tir.decl_buffer((64,), "int64", name="A", data=a)
        return S.Allocate(a, "int8", [_i64(8)], True,
                          S.DeclBuffer(small, _store(small, _i64(63))))
    _refused("buffer-type", _kernel(body))


# ---- scope

def test_a_variable_used_outside_its_loop_is_refused():
    def body(X):
        i = E.Var("i", "int64")
        return S.SeqStmt([S.For(i, _i64(0), _i64(8), S.ForKind.SERIAL, _store(X, i)),
                          _store(X, i)])
    text = _refused("scope", _kernel(body))
    assert "variable 'i' is used outside the scope that binds it" in text


def test_an_unbound_variable_is_refused():
    _refused("scope", _kernel(lambda X: _store(X, E.Var("free", "int64"))))


def test_a_variable_bound_twice_is_refused():
    def body(X):
        i = E.Var("i", "int64")
        inner = S.For(i, _i64(0), _i64(1000), S.ForKind.SERIAL, _store(X, _i64(0)))
        return S.For(i, _i64(0), _i64(8), S.ForKind.SERIAL, S.SeqStmt([inner, _store(X, i)]))
    _refused("scope", _kernel(body))


def test_a_buffer_over_memory_out_of_scope_is_refused():
    def body(X):
        a = E.Var("a", "handle")
        A = tir.decl_buffer((8,), "float32", name="A", data=a)
        alloc = S.Allocate(a, "float32", [_i64(8)], True, _store(A, _i64(0)))
        return S.SeqStmt([alloc, S.DeclBuffer(A, _store(A, _i64(1)))])
    _refused("scope", _kernel(body))


# ---- foreign-node

def test_a_variable_shared_between_kernels_is_refused():
    i = E.Var("i", "int64")

    def body(X):
        return S.For(i, _i64(0), _i64(8), S.ForKind.SERIAL, _store(X, i))
    text = _refused("foreign-node", _kernel(body, name="a"), _kernel(body, name="b"))
    assert "variable 'i' also belongs to kernel 'a'" in text


def test_a_buffer_shared_between_kernels_is_refused():
    first = _kernel(lambda X: _store(X, _i64(0)), name="a")
    X = first[1].buffer_map[first[1].params[0]]
    y = E.Var("y", "handle")
    Y = tir.decl_buffer((8,), "float32", name="Y")
    second = ("b", tir.PrimFunc([y], S.DeclBuffer(X, _store(X, _i64(1))), buffer_map={y: Y}))
    _refused("foreign-node", first, second)


# ---- unroll

def _unrolled(extents, X):
    body = _store(X, _i64(0))
    for n, extent in enumerate(extents):
        var = E.Var(f"u{n}", "int64")
        body = S.For(var, _i64(0), extent, S.ForKind.UNROLLED, body)
    return body


def test_nested_unrolls_are_capped_by_their_product():
    text = _refused("unroll", _kernel(lambda X: _unrolled([_i64(64)] * 4, X)))
    assert "makes 4096 copies" in text
    _refused("unroll", _kernel(lambda X: _unrolled([_i64(40), _i64(40)], X)))


def test_an_unrolled_extent_is_capped():
    _refused("unroll", _kernel(lambda X: _unrolled([_i64(MAX_UNROLL_EXTENT + 1)], X)))
    n = E.Var("n", "int64")
    x = E.Var("x", "handle")
    X = tir.decl_buffer((n,), "float32", name="X")
    _refused("unroll", ("k", tir.PrimFunc([x], _unrolled([n], X), buffer_map={x: X})))


def test_sibling_unrolls_are_not_multiplied():
    def body(X):
        return S.SeqStmt([_unrolled([_i64(32), _i64(32)], X), _unrolled([_i64(32), _i64(32)],
                                                                         X)])
    verify_untrusted(_round_trip([_kernel(body)]))


def test_a_shared_symbolic_dimension_is_not_foreign_but_a_shared_loop_variable_is():
    n = E.Var("n", "int64")

    def kernel(name, loop_var=None):
        x = E.Var("x", "handle")
        X = tir.decl_buffer((n,), "float32", name="X")
        i = E.Var("i", "int64") if loop_var is None else loop_var
        body = S.For(i, _i64(0), n, S.ForKind.SERIAL, _store(X, i))
        return name, tir.PrimFunc([x], body, buffer_map={x: X})
    _round_trip([kernel("a"), kernel("b")])
    i = E.Var("i", "int64")
    _refused("foreign-node", kernel("a", loop_var=i), kernel("b", loop_var=i))


# ---- what the pipeline produces passes

def _round_trip(named_funcs):
    funcs = load_prim_funcs(save_prim_funcs(named_funcs))
    verify_untrusted(funcs)
    return funcs


def test_the_kernel_cases_pass():
    from rvm.driver.build_module import build
    from tests.codegen.kernel_cases import CASES
    lib = build(IRModule({name: spec[0]() for name, spec in CASES.items()}), "c")
    funcs = load_prim_funcs(lib.tir)
    verify_untrusted(funcs)
    assert len(funcs) == len(CASES)


@I.ir_module
class ConvNet:
    @R.function
    def main(x: R.Tensor(("n", 3, 10, 10), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        n = T.int64()
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=(1, 1))
            z = R.nn.relu(R.add(y, R.const(1.0, "float32")))
            s = R.nn.softmax(R.reshape(z, R.shape([n, 400])), axis=-1)
            R.output(s)
        return s


def test_a_relax_model_with_a_symbolic_batch_passes(tmp_path):
    path = tmp_path / "conv.rvm"
    relax.build(ConvNet, target="c").export_library(str(path))
    blob = next(b for _, k, b in undump_executable(path.read_bytes(), "t")["modules"]
                if k == "c_kernels")
    funcs = load_prim_funcs(split_kernel_library(blob)[2])
    verify_untrusted(funcs)
    assert len(funcs) >= 3


@T.prim_func
def _matmul(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64, 64), "float32")
    B = T.match_buffer(b, (64, 64), "float32")
    C = T.match_buffer(c, (64, 64), "float32")
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_a_schedule_with_parallel_vectorize_and_unroll_passes():
    from rvm.driver.build_module import build
    sch = tir.Schedule(IRModule({"main": _matmul}))
    block = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [16, 4])
    j0, j1 = sch.split(j, [8, 8])
    k0, k1 = sch.split(k, [16, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.unroll(k1)
    sch.unroll(i1)
    lib = build(sch.mod, "c")
    funcs = load_prim_funcs(lib.tir)
    verify_untrusted(funcs)
    kinds = set()
    post_order_visit(funcs[0][1].body,
                     lambda n: kinds.add(n.kind) if isinstance(n, S.For) else None)
    assert {S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED} <= kinds


def test_loaded_kernels_still_run_correctly_after_the_check(tmp_path):
    path = tmp_path / "conv.rvm"
    relax.build(ConvNet, target="c").export_library(str(path))
    ex = rvm.runtime.load_module(str(path))
    vm = relax.VirtualMachine(ex, rvm.cpu())
    x = np.random.default_rng(0).standard_normal((2, 3, 10, 10)).astype("float32")
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype("float32")
    out = vm["main"](x, w).numpy()
    assert out.shape == (2, 400)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


# ---- shared nodes: checked once per scope, never expanded

def test_a_shared_expression_is_checked_again_in_another_scope():
    def body(X):
        i = E.Var("i", "int64")
        shared = i + _i64(1)
        return S.SeqStmt([S.For(i, _i64(0), _i64(7), S.ForKind.SERIAL, _store(X, shared)),
                          _store(X, shared)])
    _refused("scope", _kernel(body))


def test_a_shared_dag_is_verified_without_expanding_it():
    import time

    def body(X):
        i = E.Var("i", "int64")
        value = E.BufferLoad(X, [i])
        for _ in range(12):         # 2^12 loads once expanded, 13 nodes in the file
            value = E.Add(value, value)
        return S.For(i, _i64(0), _i64(8), S.ForKind.SERIAL, _store(X, i, value))
    funcs = _round_trip([_kernel(body, name=f"k{n}") for n in range(8)])
    start = time.perf_counter()
    for _ in range(10):
        verify_untrusted(funcs)
    assert time.perf_counter() - start < 1.0   # the expanded trees: about 15 s


def test_sampled_candidates_of_the_default_tuning_space_pass(monkeypatch):
    from rvm import meta_schedule as ms
    from rvm.meta_schedule.postproc import rewrite_parallel_vectorize_unroll as rpvu
    from rvm.codegen.c.kernel_signature import kernel_functions
    from rvm.meta_schedule.search_strategy.search_strategy import replay, without_decisions
    from rvm.support.recursion import deep_recursion
    from rvm.tir.transform.pipeline import lower_module
    from tests.meta_schedule.workloads import MyModule, with_packed_spaces
    monkeypatch.setattr(rpvu, "PARALLEL_MIN_WORK", 1)  # 128^3: parallel candidates too
    target = "llvm --num-cores=2"
    ctx = ms.TuneContext(MyModule, target=target, rand_state=3,
                         space_generator=with_packed_spaces(target))
    kinds = set()
    for space in ctx.generate_design_space():
        for seed in range(3):
            sch = replay(ctx.mod, without_decisions(space.trace), seed + 1,
                         ctx.space_generator.postprocs)
            with deep_recursion():
                lowered = lower_module(sch.mod)
            for _, func in _round_trip(kernel_functions(lowered)):
                post_order_visit(func.body, lambda n: kinds.add(getattr(n, "kind", None)))
    assert {S.ForKind.PARALLEL, S.ForKind.VECTORIZED} <= kinds


def test_mutated_files_fail_only_with_the_format_error():
    # Structure-aware mutants of real kernels (references redirected to other earlier nodes,
    # dtypes swapped): decoding and verifying either accept or raise TIRFormatError.
    import random

    import msgpack
    from rvm.driver.build_module import build
    from tests.codegen.kernel_cases import CASES
    names = ["matmul_symbolic", "softmax", "int8_sum_to_int32", "unrolled_reduction",
             "padded_conv1d", "matmul_relu_fused"]
    doc = msgpack.unpackb(build(IRModule({n: CASES[n][0]() for n in names}), "c").tir)
    rng = random.Random(7)
    dtypes = ["int8", "int32", "int64", "float32", "bool", "handle", "float32x4"]
    outcomes = {"accepted": 0, "refused": 0}
    for _ in range(150):
        nodes = [[kind, list(values)] for kind, values in doc["nodes"]]
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(1, len(nodes))
            values = nodes[i][1]
            k = rng.randrange(len(values)) if values else None
            if k is None:
                continue
            if type(values[k]) is int and values[k] < i:
                values[k] = rng.randrange(i)
            elif isinstance(values[k], str):
                values[k] = rng.choice(dtypes)
        data = msgpack.packb({"format": doc["format"], "nodes": nodes, "funcs": doc["funcs"]})
        try:
            verify_untrusted(load_prim_funcs(data))
            outcomes["accepted"] += 1
        except TIRFormatError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 30, outcomes
