"""Hugging Face ``transformers`` models through ``torch.onnx.export`` and ``from_onnx``.

The six models of test_hf_models.py (hf_models.py: small configs, seeded random weights)
are exported with the TorchScript exporter (``dynamo=False``; the dynamo exporter needs
onnxscript, which is not a dependency) with symbolic axes "batch" and, for token ids,
"seq"; each is imported once, built once, and run at two batch sizes and two sequence
lengths, matching onnxruntime on the same ONNX file to 1e-4 relative on the last hidden
state. The executable's signature keeps the symbolic axes.
"""
import numpy as np
import pytest

import rvm
from rvm import relax
from tests.relax.frontend.hf_models import MODELS, export_onnx, input_name, inputs, make

pytest.importorskip("torch")
pytest.importorskip("transformers")
onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend


@pytest.fixture(scope="module", params=sorted(MODELS))
def built(request):
    name = request.param
    _, kind, size = MODELS[name]
    data = export_onnx(make(name), kind, size)
    mod = from_onnx(onnx.load_from_string(data))
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    return name, kind, size, mod, vm, session


def test_model_matches_onnxruntime_at_two_batches_and_two_lengths(built):
    name, kind, size, _, vm, session = built
    shapes = [(1, 8), (3, 24)] if kind == "ids" else [(1, None), (3, None)]
    for batch, length in shapes:
        x = inputs(kind, size, batch, length, seed=batch)
        fields = session.run(None, {input_name(kind): x})
        out = vm["main"](x)
        got = list(out) if len(fields) > 1 else [out]  # a tuple for several outputs
        assert len(got) == len(fields), name
        actual, expected = got[0].numpy(), fields[0]
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(
            expected).max(), err_msg=f"{name} at batch {batch}, length {length}")


def test_the_signature_keeps_the_symbolic_axes(built):
    _, kind, _, mod, _, _ = built
    (param,) = mod["main"].params
    dims = [getattr(d, "name_hint", None) for d in param.struct_info_.shape_values]
    assert dims[:2] == (["batch", "seq"] if kind == "ids" else ["batch", None])
