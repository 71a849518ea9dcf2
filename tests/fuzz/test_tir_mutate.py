"""The TIR mutator: every mutator applies to the seeds, most mutants pass the decoder, and
the hostile shapes it claims to build are there."""
import random

import pytest

from fuzz import tir_mutate
from fuzz.tir_graph import TIRGraph
from fuzz.tir_seeds import tir_seeds
from rvm.tir.serialize import TIRFormatError, load_prim_funcs, save_prim_funcs
from tests.security.attack import kernel_tir

NAMES = ["vm.builtin.copy", "vm.builtin.alloc_storage"]


@pytest.fixture(scope="module")
def seeds():
    return [save_prim_funcs(kernel_tir(data)) for _, data, _ in tir_seeds()]


def _apply(fn, rng, g):
    return fn(rng, g, NAMES) if fn is tir_mutate.packed_call else fn(rng, g)


@pytest.mark.parametrize("fn", tir_mutate.MUTATORS, ids=lambda f: f.__name__)
def test_each_mutator_applies_and_mostly_decodes(seeds, fn):
    rng, applied, decoded = random.Random(1), 0, 0
    for i in range(40):
        g = TIRGraph(seeds[i % len(seeds)])
        if _apply(fn, rng, g):
            applied += 1
            try:
                load_prim_funcs(g.to_bytes())
                decoded += 1
            except ValueError:
                pass
    assert applied >= 20 and decoded >= 0.6 * applied, (applied, decoded)


def test_a_narrowing_let_binds_an_index_to_a_narrower_variable(seeds):
    rng = random.Random(3)
    for _ in range(50):
        g = TIRGraph(seeds[0])
        tir_mutate.narrowing_let(rng, g)
        for i in g.indices("Let", "LetStmt"):
            var, value = g.field(i, "var"), g.field(i, "value")
            if g.dtype(var) != g.dtype(value):
                return
    pytest.fail("no Let binding a value to a variable of another dtype")


def test_dag_sharing_expands_to_a_huge_tree(seeds):
    for seed in range(20):  # the first sharing the decoder accepts (most are within its cap)
        g = TIRGraph(seeds[0])
        tir_mutate.dag_sharing(random.Random(seed), g)
        try:
            load_prim_funcs(g.to_bytes())
            break
        except TIRFormatError as err:
            assert "expands to more than" in str(err)
    sizes = {}

    def tree_size(i):  # nodes of the expression as a tree (the DAG expanded)
        if i not in sizes:
            entry = g.nodes[i]
            refs = tir_mutate._refs(g, i) if entry[0] == "Add" else []
            sizes[i] = 1 + sum(tree_size(r) for r in refs)
        return sizes[i]
    assert max(tree_size(i) for i in g.indices("Add")) >= 2 ** 4
    assert len(g.nodes) < 2 * len(TIRGraph(seeds[0]).nodes) + 70  # while the file stays small


def test_a_packed_call_names_a_registered_global(seeds):
    g = TIRGraph(seeds[2])
    assert tir_mutate.packed_call(random.Random(0), g, ["vm.builtin.copy"])
    calls = [i for i in g.indices("Call") if g.field(i, "op") == "tir.call_packed"]
    (call,) = calls
    assert g.nodes[g.field(call, "args")[0]] == ["StringImm", ["vm.builtin.copy"]]
    load_prim_funcs(g.to_bytes())


@pytest.mark.parametrize("dtype", tir_mutate.DTYPES)
def test_a_fitted_constant_is_one_a_file_can_hold(dtype):
    # msgpack holds integers in [-2^63, 2^64): a float8 IntImm once took 843 "bits" from its
    # name, and the child stopped on an OverflowError while serializing the mutant.
    import msgpack
    for value in tir_mutate.BIG:
        fitted = tir_mutate.fit(value, dtype)
        assert -(1 << 63) <= fitted < 1 << 64
        msgpack.packb(fitted)
