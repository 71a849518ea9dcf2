"""Every operator ``from_onnx`` converts passes at least as many of onnx's bundled node
tests as CONFORMANCE.md records (``expected.json``, written by
``python -m tests.onnx_conformance.run``)."""
import json
import pathlib

import pytest

from tests.onnx_conformance import harness

pytest.importorskip("onnx")

EXPECTED = json.loads((pathlib.Path(__file__).parent / harness.EXPECTED_FILE).read_text())


@pytest.fixture(scope="module")
def cases():
    return harness.collect()


def test_every_supported_operator_has_a_recorded_count():
    from rvm.frontend.onnx import supported_ops

    assert sorted(EXPECTED) == supported_ops()


@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_operator_keeps_its_pass_count(cases, op):
    entry = harness.run_operators(cases, [op])[op]
    assert len(entry["passed"]) >= EXPECTED[op], (
        f"{op}: {len(entry['passed'])} node tests pass, CONFORMANCE.md records "
        f"{EXPECTED[op]}; failures: {entry['failed']}")
