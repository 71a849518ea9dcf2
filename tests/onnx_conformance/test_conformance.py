"""Every operator ``from_onnx`` converts passes at least as many of onnx's bundled node
tests as CONFORMANCE.md records (``expected.json``, written by
``python -m tests.onnx_conformance.run``)."""
import json
import pathlib

import pytest

from tests.onnx_conformance import harness

pytestmark = [pytest.mark.frontend, pytest.mark.slow]

pytest.importorskip("onnx")

EXPECTED = json.loads((pathlib.Path(__file__).parent / harness.EXPECTED_FILE).read_text())


@pytest.fixture(scope="module")
def cases():
    return harness.collect()


def test_every_supported_operator_has_a_recorded_count():
    from rvm.relax.frontend.onnx import supported_ops

    assert sorted(EXPECTED) == supported_ops()


@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_operator_keeps_its_pass_count(cases, op):
    entry = harness.run_operators(cases, [op])[op]
    assert len(entry["passed"]) >= EXPECTED[op], (
        f"{op}: {len(entry['passed'])} node tests pass, CONFORMANCE.md records "
        f"{EXPECTED[op]}; failures: {entry['failed']}")


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
