"""Small Hugging Face ``transformers`` models and their exports, shared by the importer tests
(test_hf_models.py: torch.export; test_hf_onnx.py: torch.onnx.export) and
benchmarks/bench_hf_models.py.

Each model is made from a small config (2 layers, hidden 128) with seeded random weights
(nothing is downloaded). ``MODELS`` maps a name to ``(factory, kind, image size)``: "ids"
models take int64 token ids (batch, sequence), "image" models float32 pixels
(batch, 3, size, size). torch and transformers are imported when a model is made.
"""
import io
import warnings

import numpy as np

VOCAB = 500  # token ids are drawn below this
MAX_LENGTH = 64  # position tables of the sequence models hold this many positions

_COMMON = dict(num_hidden_layers=2, hidden_size=128, num_attention_heads=4,
               intermediate_size=256)


def _transformers():
    import transformers

    return transformers


def gpt2(image_size=None):
    """GPT2Model (no cache); ``image_size``, as every factory takes it, is unused."""
    t = _transformers()
    return t.GPT2Model(t.GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=MAX_LENGTH,
                                    vocab_size=VOCAB, use_cache=False))


def bert(image_size=None):
    """BertModel without its pooler."""
    t = _transformers()
    return t.BertModel(t.BertConfig(vocab_size=VOCAB, max_position_embeddings=MAX_LENGTH,
                                    **_COMMON), add_pooling_layer=False)


def vit(image_size=32):
    """ViTModel (patches of 8) for ``image_size`` images, without its pooler."""
    t = _transformers()
    return t.ViTModel(t.ViTConfig(image_size=image_size, patch_size=8, **_COMMON),
                      add_pooling_layer=False)


def t5(image_size=None):
    """T5EncoderModel."""
    t = _transformers()
    return t.T5EncoderModel(t.T5Config(vocab_size=VOCAB, d_model=128, d_kv=32, d_ff=256,
                                       num_layers=2, num_heads=4))


def resnet(image_size=None):
    """ResNetModel (basic blocks, 16 and 32 channels); any image size."""
    t = _transformers()
    return t.ResNetModel(t.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32],
                                        depths=[1, 1], layer_type="basic"))


def llama(image_size=None):
    """LlamaModel (grouped-query attention: 2 key/value heads; no cache)."""
    t = _transformers()
    return t.LlamaModel(t.LlamaConfig(vocab_size=VOCAB, max_position_embeddings=MAX_LENGTH,
                                      num_key_value_heads=2, use_cache=False, **_COMMON))


# name: (factory, kind, image size the tests use)
MODELS = {"gpt2": (gpt2, "ids", None), "bert": (bert, "ids", None),
          "vit": (vit, "image", 32), "t5": (t5, "ids", None),
          "resnet": (resnet, "image", 64), "llama": (llama, "ids", None)}


def make(name, image_size=None):
    """The model ``name`` in eval mode, its weights seeded (``image_size`` overrides the
    image size of a ViT)."""
    import torch

    factory, _, size = MODELS[name]
    torch.manual_seed(0)
    return factory(image_size or size).eval()


def inputs(kind, size, batch, length, seed):
    """A numpy input: token ids (batch, length) or pixels (batch, 3, size, size)."""
    rng = np.random.default_rng(seed)
    if kind == "ids":
        return rng.integers(0, VOCAB, (batch, length)).astype("int64")
    return rng.standard_normal((batch, 3, size, size)).astype("float32")


def input_name(kind):
    """The keyword the model's forward takes its input by."""
    return "input_ids" if kind == "ids" else "pixel_values"


def export_program(model, kind, size):
    """``torch.export.export`` of ``model`` with a symbolic batch (1-32) and, for token
    ids, a symbolic sequence length (2-64)."""
    import torch

    batch = torch.export.Dim("batch", min=1, max=32)
    name = input_name(kind)
    example = torch.from_numpy(inputs(kind, size, 2, 16, 0))
    axes = {0: batch, 1: torch.export.Dim("seq", min=2, max=MAX_LENGTH)} if kind == "ids" \
        else {0: batch}
    return torch.export.export(model, (), {name: example}, dynamic_shapes={name: axes})


def export_onnx(model, kind, size):
    """The serialized ONNX model of ``model`` (``torch.onnx.export``'s TorchScript
    exporter, ``dynamo=False``: the dynamo exporter needs onnxscript), with symbolic axes
    "batch" and, for token ids, "seq"; the first output is "last_hidden_state"."""
    import torch

    name = input_name(kind)
    example = torch.from_numpy(inputs(kind, size, 2, 16, 0))
    axes = {0: "batch", 1: "seq"} if kind == "ids" else {0: "batch"}
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, and traces
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), buffer, input_names=[name],
                          output_names=["last_hidden_state"], dynamo=False,
                          dynamic_axes={name: axes, "last_hidden_state": axes})
    return buffer.getvalue()
