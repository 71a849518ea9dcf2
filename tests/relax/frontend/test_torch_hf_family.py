"""More of the ``transformers`` family through torch.export and ``from_exported_program``:
DistilBERT, OPT (whose decoder fills its mask with a slice assignment, an in-place
``copy_``) and ConvNeXt, each from a small seeded config, exported with a symbolic batch
(and sequence length), built once and matching torch eager at two batch sizes (and two
lengths) on the last hidden state. test_hf_models.py has the first six."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import from_exported_program
from tests.relax.frontend.hf_models import export_program, inputs

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.frontend


def _distilbert():
    return transformers.DistilBertModel(transformers.DistilBertConfig(
        vocab_size=500, max_position_embeddings=64, n_layers=2, dim=128, n_heads=4,
        hidden_dim=256))


def _opt():
    return transformers.OPTModel(transformers.OPTConfig(
        vocab_size=500, max_position_embeddings=64, num_hidden_layers=2, hidden_size=128,
        num_attention_heads=4, ffn_dim=256, word_embed_proj_dim=128, use_cache=False))


def _convnext():
    return transformers.ConvNextModel(transformers.ConvNextConfig(
        hidden_sizes=[16, 32], depths=[1, 1], num_stages=2))


# name: (factory, kind, image size); "ids" models take int64 token ids (batch, sequence)
MODELS = {"distilbert": (_distilbert, "ids", None), "opt": (_opt, "ids", None),
          "convnext": (_convnext, "image", 32)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_torch_at_two_batches_and_two_lengths(name):
    factory, kind, size = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    program = export_program(model, kind, size)
    vm = relax.VirtualMachine(relax.build(from_exported_program(program)), rvm.cpu())
    shapes = [(1, 8), (3, 24)] if kind == "ids" else [(1, None), (3, None)]
    for batch, length in shapes:
        x = inputs(kind, size, batch, length, seed=batch)
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).to_tuple()[0].numpy()
        actual = vm["main"](x)[0].numpy()
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(
            expected).max(), err_msg=f"{name} at batch {batch}, length {length}")
