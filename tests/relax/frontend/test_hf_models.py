"""Hugging Face ``transformers`` models through torch.export and ``from_exported_program``.

Each model is made from a small config (2 layers, hidden 128) with seeded random weights
(nothing is downloaded), exported with a symbolic batch and sequence length (images: a
symbolic batch), imported, built once, and run at two batch sizes and two sequence lengths,
matching torch eager on the last hidden state. The model's output (a ``ModelOutput``)
becomes a Relax tuple in the exporter's order.
"""
import time

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.frontend.torch import from_exported_program

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.frontend

_COMMON = dict(num_hidden_layers=2, hidden_size=128, num_attention_heads=4,
               intermediate_size=256)


def _gpt2():
    return transformers.GPT2Model(transformers.GPT2Config(
        n_layer=2, n_embd=128, n_head=4, n_positions=64, vocab_size=500, use_cache=False))


def _bert():
    return transformers.BertModel(transformers.BertConfig(
        vocab_size=500, max_position_embeddings=64, **_COMMON), add_pooling_layer=False)


def _vit():
    return transformers.ViTModel(transformers.ViTConfig(image_size=32, patch_size=8, **_COMMON),
                                 add_pooling_layer=False)


def _t5():
    return transformers.T5EncoderModel(transformers.T5Config(
        vocab_size=500, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4))


def _resnet():
    return transformers.ResNetModel(transformers.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic"))


def _llama():
    return transformers.LlamaModel(transformers.LlamaConfig(
        vocab_size=500, max_position_embeddings=64, num_key_value_heads=2, use_cache=False,
        **_COMMON))


# name: (factory, kind, image size); "ids" models take int64 token ids (batch, sequence)
MODELS = {"gpt2": (_gpt2, "ids", None), "bert": (_bert, "ids", None),
          "vit": (_vit, "image", 32), "t5": (_t5, "ids", None),
          "resnet": (_resnet, "image", 64), "llama": (_llama, "ids", None)}


def _inputs(kind, size, batch, length, seed):
    rng = np.random.default_rng(seed)
    if kind == "ids":
        return rng.integers(0, 500, (batch, length)).astype("int64")
    return rng.standard_normal((batch, 3, size, size)).astype("float32")


def _export(model, kind, size):
    batch = torch.export.Dim("batch", min=1, max=32)
    if kind == "ids":
        seq = torch.export.Dim("seq", min=2, max=64)
        example = torch.from_numpy(_inputs(kind, size, 2, 16, 0))
        return torch.export.export(model, (), {"input_ids": example},
                                   dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    example = torch.from_numpy(_inputs(kind, size, 2, None, 0))
    return torch.export.export(model, (), {"pixel_values": example},
                               dynamic_shapes={"pixel_values": {0: batch}})


# the program as torch.export gives it, and ResNet (the cheapest to build) in the core ATen
# opset after run_decompositions(): convolution, max_pool2d_with_indices, batch norm
# (test_torch_core_aten.py has each core ATen operator; all six models match decomposed too)
VARIANTS = [(name, False) for name in sorted(MODELS)] + [("resnet", True)]


@pytest.fixture(scope="module", params=VARIANTS,
                ids=[f"{n}-core_aten" if core else n for n, core in VARIANTS])
def built(request):
    name, core_aten = request.param
    factory, kind, size = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    start = time.perf_counter()
    program = _export(model, kind, size)
    if core_aten:
        program = program.run_decompositions()
    vm = relax.VirtualMachine(relax.build(from_exported_program(program)), rvm.cpu())
    return name, model, vm, kind, size, time.perf_counter() - start


def test_model_matches_torch_at_two_batches_and_two_lengths(built):
    name, model, vm, kind, size, _ = built
    shapes = [(1, 8), (3, 24)] if kind == "ids" else [(1, None), (3, None)]
    for batch, length in shapes:
        x = _inputs(kind, size, batch, length, seed=batch)
        with torch.no_grad():
            fields = model(torch.from_numpy(x)).to_tuple()
        expected = fields[0].numpy()
        out = vm["main"](x)
        assert len(list(out)) == len(fields), name  # a tuple in the exporter's order
        actual = out[0].numpy()
        assert actual.shape == expected.shape, name
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(
            expected).max(), err_msg=f"{name} at batch {batch}, length {length}")
