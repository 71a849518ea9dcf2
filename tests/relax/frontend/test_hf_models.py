"""Hugging Face ``transformers`` models through torch.export and ``from_exported_program``.

Each model (hf_models.py) is made from a small config (2 layers, hidden 128) with seeded
random weights (nothing is downloaded), exported with a symbolic batch and sequence length
(images: a symbolic batch), imported, built once, and run at two batch sizes and two
sequence lengths, matching torch eager on the last hidden state. The model's output (a
``ModelOutput``) becomes a Relax tuple in the exporter's order.
"""
import time

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import from_exported_program
from tests.relax.frontend.hf_models import MODELS, export_program, inputs, make

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.frontend

# the program as torch.export gives it, and ResNet (the cheapest to build) in the core ATen
# opset after run_decompositions(): convolution, max_pool2d_with_indices, batch norm
# (test_torch_core_aten.py has each core ATen operator; all six models match decomposed too)
VARIANTS = [(name, False) for name in sorted(MODELS)] + [("resnet", True)]


@pytest.fixture(scope="module", params=VARIANTS,
                ids=[f"{n}-core_aten" if core else n for n, core in VARIANTS])
def built(request):
    name, core_aten = request.param
    _, kind, size = MODELS[name]
    model = make(name)
    start = time.perf_counter()
    program = export_program(model, kind, size)
    if core_aten:
        program = program.run_decompositions()
    vm = relax.VirtualMachine(relax.build(from_exported_program(program)), rvm.cpu())
    return name, model, vm, kind, size, time.perf_counter() - start


def test_model_matches_torch_at_two_batches_and_two_lengths(built):
    name, model, vm, kind, size, _ = built
    shapes = [(1, 8), (3, 24)] if kind == "ids" else [(1, None), (3, None)]
    for batch, length in shapes:
        x = inputs(kind, size, batch, length, seed=batch)
        with torch.no_grad():
            fields = model(torch.from_numpy(x)).to_tuple()
        expected = fields[0].numpy()
        out = vm["main"](x)
        assert len(list(out)) == len(fields), name  # a tuple in the exporter's order
        actual = out[0].numpy()
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(
            expected).max(), err_msg=f"{name} at batch {batch}, length {length}")
