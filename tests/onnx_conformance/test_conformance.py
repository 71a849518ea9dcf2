"""The conformance record holds: every operator ``from_onnx`` converts has its passing
node tests recorded (``expected.json``, written with CONFORMANCE.md by
``python -m tests.onnx_conformance.run``), and a sample of one recorded test per
operator still passes on the C target with every graph input fed at run time (built as
one module: one C compilation). The full run, ``python -m tests.onnx_conformance.run
--check``, fails when an operator passes fewer tests than recorded."""
import json
import pathlib

import pytest

from tests.onnx_conformance import harness, run

pytestmark = [pytest.mark.frontend, pytest.mark.slow]

pytest.importorskip("onnx")

HERE = pathlib.Path(__file__).parent
EXPECTED = json.loads((HERE / harness.EXPECTED_FILE).read_text())


@pytest.fixture(scope="module")
def cases():
    return harness.collect()


def test_every_supported_operator_has_a_recorded_count():
    from rvm.relax.frontend.onnx import supported_ops

    assert sorted(EXPECTED) == supported_ops()


def test_conformance_md_states_the_recorded_counts():
    rows = {}
    for line in (run.ROOT / "CONFORMANCE.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        cells[0] = cells[0].split(" (recorded")[0]  # an operator kept from the record
        if len(cells) == 6 and cells[0] in EXPECTED:
            rows[cells[0]] = int(cells[2])
    assert rows == {op: len(names) for op, names in EXPECTED.items()}


def test_one_recorded_test_per_operator_passes_on_the_c_target(cases):
    picked = harness.sample(EXPECTED)
    assert set(picked) == {op for op, names in EXPECTED.items() if names}
    names = sorted(set(picked.values()))
    outcomes = harness.run_cases([cases[n][1] for n in names], target="c")
    failed = {n: reason for n, (passed, reason, _) in zip(names, outcomes) if not passed}
    assert not failed, f"recorded passing tests now fail on the C target: {failed}"


def test_a_drop_below_the_record_is_reported():
    results = {"Abs": {"passed": [], "failed": {"test_abs": "values differ"},
                       "not_run": {}, "bound": {}},
               "Add": {"passed": ["test_add"], "failed": {}, "not_run": {}, "bound": {}}}
    assert run.drops(results, {"Abs": ["test_abs"], "Add": ["test_add"]}) == {"Abs": (0, 1)}


def test_a_graph_input_the_importer_needs_at_import_is_bound_with_its_reason(cases):
    # a scalar split decides how many tensors the sequence holds: needed at import
    (passed, reason, bound), = harness.run_cases(
        [cases["test_split_to_sequence_1"][1]], target="python")
    assert passed, reason
    assert bound == {"split": "SplitToSequence's split must be known at import"}


@pytest.mark.parametrize("name", ["test_reshape_extended_dims",
                                  "test_reduce_sum_keepdims_example", "test_onehot_with_axis",
                                  "test_edge_pad", "test_slice",
                                  "test_resize_upsample_sizes_nearest"])
def test_a_shape_operand_fed_at_run_time_is_not_bound(cases, name):
    (passed, reason, bound), = harness.run_cases([cases[name][1]], target="python")
    assert passed, reason
    assert bound == {}


def test_the_tests_of_a_batch_are_built_alone_when_the_batch_build_fails(cases, monkeypatch):
    from rvm import relax

    real_build, sizes = relax.build, []

    def build(mod, *args, **kwargs):
        sizes.append(len(mod.functions))
        if len(mod.functions) > 1:
            raise ValueError("a pass failed on one function of the batch")
        return real_build(mod, *args, **kwargs)

    monkeypatch.setattr(relax, "build", build)
    names = ["test_abs", "test_exp", "test_relu"]
    outcomes = harness.run_cases([cases[n][1] for n in names], target="python")
    assert [passed for passed, _, _ in outcomes] == [True, True, True]
    assert sizes == [3, 1, 1, 1]


def test_an_operator_kept_from_the_record_is_marked_in_the_table():
    results = {"Abs": {"passed": ["test_abs"], "failed": {}, "not_run": {}, "bound": {},
                       "reused": True},
               "Add": {"passed": ["test_add"], "failed": {}, "not_run": {}, "bound": {}}}
    table = run._table(results, 2, {}, "x", "c")
    assert "| Abs (recorded, not re-run) | 1 | 1 | 100% | 0 | 0 |" in table
    assert "| Add | 1 | 1 | 100% | 0 | 0 |" in table


def test_a_failure_whose_expected_values_miss_the_float64_reference_says_so(cases):
    # onnx's test_dft_inverse expects numpy's single-precision FFT: its expected values
    # are 1.5e-6 from the exact inverse DFT, beyond the test's atol of 1e-7
    passed, reason, _ = harness.run_case(cases["test_dft_inverse"][1], target="c")
    assert not passed
    assert "the expected values themselves fail this comparison" in reason
    # a correct value that fails only on tolerance, with exact expectations, gets no note
    case = cases["test_abs"][1]
    inputs, outputs = case.data_sets[0]
    got = outputs[0] + 1.0

    class Got:
        def numpy(self):
            return got
    assert harness._reference_note(case, 0, Got(), outputs[0]) == ""
