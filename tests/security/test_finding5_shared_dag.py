"""Finding 5: serialized TIR shares nodes, and everything after decoding (verifier, code
generator, bounds prover, C compiler) walks a kernel as a tree: a few hundred bytes that
expand to 2^40 nodes once took 40 s and 19 MB of C. The decoder computes each node's
expanded size as it reads it (memoized, nothing expanded) and refuses the file at load,
quickly, with a named error."""
import time

import msgpack
import numpy as np
import pytest

import rvm
from rvm import relax, tir
from rvm.tir import expr as E
from rvm.tir import stmt as S
from rvm.tir.serialize import MAX_TREE_NODES, TIRFormatError, load_prim_funcs
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels

X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("finding5") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


def _doubling(saved, levels, statements=False):
    """add_one whose stored value (or body) doubles ``levels`` times by sharing one node."""
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    if statements:
        body = S.BufferStore(Yb, tir.const(1.0, "float32"), [tir.const(0, "int64")])
        for _ in range(levels):
            body = S.SeqStmt([body, body])
    else:
        value = E.BufferLoad(Xb, [tir.const(0, "int64")])
        for _ in range(levels):
            value = E.Add(value, value)
        body = S.BufferStore(Yb, value, [tir.const(0, "int64")])
    return with_kernels(saved, funcs=[(name, func.with_body(body))])


def _tir_of(data):
    from rvm.bytecode.serialize import undump_executable
    from tests.security.attack import split_kernel_library
    blob = next(b for _, k, b in undump_executable(data, "t")["modules"] if k == "c_kernels")
    return split_kernel_library(blob)[2]


@pytest.mark.parametrize("statements", [False, True], ids=["expressions", "statements"])
def test_the_stored_tir_is_tiny_and_refused_quickly_in_process(saved, tmp_path, statements):
    data = _doubling(saved, 40, statements)
    tir_bytes = _tir_of(data)
    assert len(tir_bytes) < 2000
    assert len(msgpack.unpackb(tir_bytes)["nodes"]) < 100
    path = tmp_path / "dag.rvm"
    path.write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"expands to more than {MAX_TREE_NODES} nodes"):
        rvm.runtime.load_module(str(path))
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("engine", ENGINES)
def test_refused_at_load_on_both_engines(saved, tmp_path, engine):
    path = tmp_path / "dag.rvm"
    path.write_bytes(_doubling(saved, 60))
    start = time.perf_counter()
    result = run_untrusted(path, [X], engine=engine, timeout=60)
    elapsed = time.perf_counter() - start
    assert result.returncode == 3, result.stdout + result.stderr
    assert "TIRFormatError" in result.stdout and "expands to more than" in result.stdout
    assert elapsed < 15, elapsed   # interpreter start and imports included


def test_sharing_below_the_cap_still_loads_and_runs(saved, tmp_path):
    # 2^8 additions of X[0]: shared in the file, a legitimate (if odd) tree of 767 nodes.
    path = tmp_path / "small_dag.rvm"
    path.write_bytes(_doubling(saved, 8))
    result = run_untrusted(path, [X + 1], engine="native")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RAN [256.0," in result.stdout    # only Y[0] is written: 2^8 * X[0]


def test_the_total_over_all_kernels_is_capped_too(saved):
    (name, func), = kernel_tir(saved)
    from rvm.tir.serialize import MAX_TOTAL_TREE_NODES, save_prim_funcs
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    value = E.BufferLoad(Xb, [tir.const(0, "int64")])
    levels = MAX_TREE_NODES.bit_length() - 5    # one kernel stays under the per-node cap
    for _ in range(levels):
        value = E.Add(value, value)
    one = func.with_body(S.BufferStore(Yb, value, [tir.const(0, "int64")]))
    copies = MAX_TOTAL_TREE_NODES // (1 << levels) + 2
    data = save_prim_funcs([(f"k{i}", one) for i in range(copies)])
    with pytest.raises(TIRFormatError, match="the functions expand to more than"):
        load_prim_funcs(data)


def test_nesting_deeper_than_the_cap_is_refused(saved):
    from rvm.tir.serialize import MAX_DEPTH, save_prim_funcs
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    value = E.BufferLoad(Xb, [tir.const(0, "int64")])
    for _ in range(MAX_DEPTH + 10):
        value = E.Add(value, tir.const(1.0, "float32"))
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * MAX_DEPTH))   # the encoder recurses
    try:
        data = save_prim_funcs([(name, func.with_body(S.BufferStore(Yb, value, [
            tir.const(0, "int64")])))])
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(TIRFormatError, match=f"nests deeper than {MAX_DEPTH} levels"):
        load_prim_funcs(data)


def test_nesting_just_under_the_cap_regenerates(saved):
    # What the decoder lets through, the code generator can walk (its recursion has room).
    from rvm.codegen.c.target import regenerate_c
    from rvm.runtime.compiler import default_compiler
    from rvm.support.recursion import deep_recursion
    from rvm.tir.serialize import MAX_DEPTH, save_prim_funcs
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    zero = tir.const(0, "int64")
    body = S.BufferStore(Yb, E.BufferLoad(Xb, [zero]), [zero])
    for k in range(MAX_DEPTH // 2 - 8):
        body = S.IfThenElse(E.LT(zero, tir.const(1, "int64")),
                            S.LetStmt(E.Var(f"t{k}", "int64"), zero, body))
    with deep_recursion():   # the encoder recurses
        data = save_prim_funcs([(name, func.with_body(body))])
    source, names, _, _ = regenerate_c(data, default_compiler())
    assert names == [name] and source.count("if (") >= MAX_DEPTH // 2 - 8


def test_text_counts_toward_the_expanded_size(saved):
    # One long message in the file, repeated by 200 assertions in the generated C.
    from rvm.tir.serialize import MAX_TEXT, TEXT_PER_NODE, save_prim_funcs
    (name, func), = kernel_tir(saved)
    message = E.StringImm("m" * MAX_TEXT)
    body = S.Evaluate(tir.const(0, "int32"))
    for _ in range(200):
        body = S.AssertStmt(tir.const(True, "bool"), message, body)
    assert 200 * MAX_TEXT // TEXT_PER_NODE > MAX_TREE_NODES
    data = save_prim_funcs([(name, func.with_body(body))])
    with pytest.raises(TIRFormatError, match="expands to more than"):
        load_prim_funcs(data)
    with pytest.raises(TIRFormatError, match=f"expected a message of at most {MAX_TEXT}"):
        load_prim_funcs(save_prim_funcs([(name, func.with_body(S.AssertStmt(
            tir.const(True, "bool"), E.StringImm("m" * (MAX_TEXT + 1)), body)))]))


@pytest.mark.parametrize("budget", [None, "default"])
def test_the_bounds_prover_spends_a_bounded_effort_on_a_shared_index(saved, monkeypatch, budget):
    # Under the decoder's caps, an index shared as a DAG is walked as a tree by the prover,
    # once per access and again for each intermediate's range: the TIR fuzzer found files
    # taking it over a minute. Past its budget it gives up; the accesses are then guarded.
    from rvm.codegen.c import bounds
    from rvm.codegen.c.target import regenerate_c
    from rvm.runtime.compiler import default_compiler
    from rvm.tir.serialize import save_prim_funcs
    (name, func), = kernel_tir(saved)
    x, y = func.params
    Xb, Yb = func.buffer_map[x], func.buffer_map[y]
    d = tir.const(1, "int64")
    for _ in range(11):
        d = E.Add(d, d)
    zero = E.Sub(d, d)  # 0, as 2^13 nodes
    stores = [S.BufferStore(Yb, E.Add(E.BufferLoad(Xb, [zero]), tir.const(1.0, "float32")),
                            [zero]) for _ in range(3)]
    data = save_prim_funcs([(name, func.with_body(S.SeqStmt(stores)))])
    provers, limit = [], bounds.WORK_LIMIT
    original = bounds.BoundsProver.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        provers.append(self)
    monkeypatch.setattr(bounds.BoundsProver, "__init__", recording)
    if budget is None:  # what the walk costs unbounded: well past the budget
        monkeypatch.setattr(bounds, "WORK_LIMIT", 1 << 40)
    source, names, _, _ = regenerate_c(data, default_compiler())
    assert names == [name] and provers
    work = max(p.work for p in provers)
    if budget is None:
        assert work > limit
    else:
        assert work <= limit + (1 << 8)
        assert source.count("rvm_oob_hit(&rvm_oob") >= 2  # the loads and stores are guarded
