"""Forms ``torch.onnx.export`` writes for a Hugging Face BERT or GPT-2, built with
onnx.helper at a small size (symbolic batch and sequence), imported with ``from_onnx``,
built by the default pipeline and run against onnxruntime on both VM engines:

- attention: K transposed past the heads with one Transpose (perm 0, 2, 3, 1), Q and K^T
  each scaled by ``sqrt(1 / sqrt(head size))``, MatMul, Add of a mask, Softmax; the scores
  reach the attention rule as an NT matmul (FuseTransposeMatmul reads the keys along their
  head size);
- layer normalization below opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
  Mul, Add): imported as one ``R.nn.layer_norm`` (ComposeLayerNorm), and a near miss (the
  epsilon added after the square root) imported op by op.
"""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.driver.relax_build import lower
from rvm.target.target import Target
from rvm.tir.function import PrimFunc

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

HEADS, HEAD_SIZE = 2, 4
HIDDEN = HEADS * HEAD_SIZE


def _attention():
    """x (batch, seq, HIDDEN), mask (batch, 1, seq, seq) -> y (batch, seq, HIDDEN)."""
    rng = np.random.default_rng(0)
    weights = {name: rng.standard_normal((HIDDEN, HIDDEN)).astype("float32")
               for name in ("wq", "wk", "wv")}
    scale = np.array([np.sqrt(1.0 / np.sqrt(HEAD_SIZE))], dtype="float32")
    inits = [numpy_helper.from_array(v, n) for n, v in weights.items()] + [
        numpy_helper.from_array(np.array([0, 0, HEADS, HEAD_SIZE], dtype="int64"), "heads"),
        numpy_helper.from_array(np.array([0, 0, HIDDEN], dtype="int64"), "merged"),
        numpy_helper.from_array(scale, "scale")]
    node = helper.make_node
    nodes = [node("MatMul", ["x", "wq"], ["q"]), node("MatMul", ["x", "wk"], ["k"]),
             node("MatMul", ["x", "wv"], ["v"])]
    for name in ("q", "k", "v"):
        nodes.append(node("Reshape", [name, "heads"], [name + "_r"]))
    nodes += [node("Transpose", ["q_r"], ["q_h"], perm=[0, 2, 1, 3]),
              node("Transpose", ["k_r"], ["k_t"], perm=[0, 2, 3, 1]),
              node("Transpose", ["v_r"], ["v_h"], perm=[0, 2, 1, 3]),
              node("Mul", ["q_h", "scale"], ["q_s"]), node("Mul", ["k_t", "scale"], ["k_s"]),
              node("MatMul", ["q_s", "k_s"], ["scores"]),
              node("Add", ["scores", "mask"], ["masked"]),
              node("Softmax", ["masked"], ["probs"], axis=-1),
              node("MatMul", ["probs", "v_h"], ["o"]),
              node("Transpose", ["o"], ["o_t"], perm=[0, 2, 1, 3]),
              node("Reshape", ["o_t", "merged"], ["y"])]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, "seq", "seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _rules(mod):
    """{kernel name: the default rule it got} of ``mod`` lowered by the default pipeline."""
    with Target("c"):
        lowered = lower(mod)
    return {gv.name_hint: f.get_attr("tir.is_scheduled") for gv, f in lowered.functions.items()
            if isinstance(f, PrimFunc) and not gv.name_hint.startswith("shape_func")}


@pytest.fixture(scope="module")
def exported():
    model = _attention()
    mod = from_onnx(model)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return mod, relax.build(mod, target="c"), session


def test_the_scores_reach_the_attention_rule(exported):
    rules = _rules(exported[0])
    scores = [name for name in rules if "NT_matmul" in name]
    assert len(scores) == 1, rules
    assert rules[scores[0]] == "attention", rules


@pytest.mark.parametrize("engine", ["python", "native"])
def test_it_matches_onnxruntime_at_two_shapes(exported, engine):
    _, ex, session = exported
    vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
    rng = np.random.default_rng(3)
    for batch, seq in ((1, 5), (3, 19)):
        x = rng.standard_normal((batch, seq, HIDDEN)).astype("float32")
        mask = np.where(rng.random((batch, 1, seq, seq)) < 0.2, -1e4, 0.0).astype("float32")
        want = session.run(None, {"x": x, "mask": mask})[0]
        got = vm["main"](x, mask).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                   err_msg=f"batch {batch}, seq {seq}, {engine}")



def _layer_norm(eps_after_sqrt=False):
    """x (batch, seq, HIDDEN) -> y: the opset-14 export of ``nn.LayerNorm(HIDDEN)``."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(HIDDEN).astype("float32"), "gamma"),
             numpy_helper.from_array(rng.standard_normal(HIDDEN).astype("float32"), "beta"),
             numpy_helper.from_array(np.array(2.0, dtype="float32"), "two"),
             numpy_helper.from_array(np.array(1e-5, dtype="float32"), "eps")]
    node = helper.make_node
    nodes = [node("ReduceMean", ["x"], ["mean"], axes=[-1]),
             node("Sub", ["x", "mean"], ["d"]),
             node("Pow", ["d", "two"], ["sq"]),
             node("ReduceMean", ["sq"], ["var"], axes=[-1])]
    if eps_after_sqrt:
        nodes += [node("Sqrt", ["var"], ["std"]), node("Add", ["std", "eps"], ["den"])]
    else:
        nodes += [node("Add", ["var", "eps"], ["ve"]), node("Sqrt", ["ve"], ["den"])]
    nodes += [node("Div", ["d", "den"], ["n"]), node("Mul", ["n", "gamma"], ["scaled"]),
              node("Add", ["scaled", "beta"], ["y"])]
    graph = helper.make_graph(
        nodes, "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("eps_after_sqrt", [False, True], ids=["layer norm", "near miss"])
def test_a_spelled_out_layer_norm(eps_after_sqrt):
    model = _layer_norm(eps_after_sqrt)
    mod = from_onnx(model)
    ops = [b.value.op.name for b in mod["main"].body.blocks[0].bindings
           if hasattr(b.value, "op")]
    assert ("relax.nn.layer_norm" in ops) != eps_after_sqrt, ops
    assert ("relax.sqrt" in ops) == eps_after_sqrt, ops
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    ex = relax.build(mod, target="c")
    x = (np.random.default_rng(4).standard_normal((3, 5, HIDDEN)) * 2 + 1).astype("float32")
    want = session.run(None, {"x": x})[0]
    for engine in ("python", "native"):
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=engine)


def _rms_norm(form):
    """x (batch, seq, HIDDEN) -> y: a Llama RMSNorm as ``torch.onnx.export`` writes it
    (Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul), with Div for the reciprocal and
    multiply, or the near miss with the epsilon added after the square root."""
    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.standard_normal(HIDDEN).astype("float32"), "weight"),
             numpy_helper.from_array(np.array(2.0, dtype="float32"), "two"),
             numpy_helper.from_array(np.array(1e-6, dtype="float32"), "eps")]
    node = helper.make_node
    nodes = [node("Pow", ["x", "two"], ["sq"]),
             node("ReduceMean", ["sq"], ["ms"], axes=[-1])]
    if form == "near miss":
        nodes += [node("Sqrt", ["ms"], ["std"]), node("Add", ["std", "eps"], ["den"])]
    else:
        nodes += [node("Add", ["ms", "eps"], ["me"]), node("Sqrt", ["me"], ["den"])]
    if form == "div":
        nodes += [node("Div", ["x", "den"], ["n"])]
    else:
        nodes += [node("Reciprocal", ["den"], ["inv"]), node("Mul", ["x", "inv"], ["n"])]
    nodes += [node("Mul", ["weight", "n"], ["y"])]
    graph = helper.make_graph(
        nodes, "rms_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("form", ["reciprocal", "div", "near miss"])
def test_a_spelled_out_rms_norm(form):
    model = _rms_norm(form)
    mod = from_onnx(model)
    ops = [b.value.op.name for b in mod["main"].body.blocks[0].bindings
           if hasattr(b.value, "op")]
    assert ("relax.nn.rms_norm" in ops) == (form != "near miss"), ops
    assert ("relax.sqrt" in ops) == (form == "near miss"), ops
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    ex = relax.build(mod, target="c")
    x = (np.random.default_rng(7).standard_normal((3, 5, HIDDEN)) * 2 + 1).astype("float32")
    want = session.run(None, {"x": x})[0]
    for engine in ("python", "native"):
        got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=engine)


def _layer_norm_function(eps_after_sqrt=False):
    """x (batch, seq, HIDDEN) -> y: ONNX's LayerNormalization function body (axis -1,
    stash_type float), as a runtime without the operator expands it: Flatten, Cast,
    E[x^2] - E[x]^2, Sqrt, Reciprocal, the scale and bias flattened, Reshape back."""
    rng = np.random.default_rng(9)
    inits = [numpy_helper.from_array(rng.standard_normal(HIDDEN).astype("float32"), "scale"),
             numpy_helper.from_array(rng.standard_normal(HIDDEN).astype("float32"), "bias"),
             numpy_helper.from_array(np.array(1e-5, dtype="float32"), "eps")]
    node = helper.make_node
    nodes = [node("Flatten", ["x"], ["x2d"], axis=2),
             node("Cast", ["x2d"], ["xu"], to=TensorProto.FLOAT),
             node("ReduceMean", ["xu"], ["mean"], axes=[1]),
             node("Mul", ["xu", "xu"], ["sq"]),
             node("ReduceMean", ["sq"], ["ms"], axes=[1]),
             node("Mul", ["mean", "mean"], ["som"]),
             node("Sub", ["ms", "som"], ["var"])]
    if eps_after_sqrt:
        nodes += [node("Sqrt", ["var"], ["sdv"]), node("Add", ["sdv", "eps"], ["sd"])]
    else:
        nodes += [node("Add", ["var", "eps"], ["ve"]), node("Sqrt", ["ve"], ["sd"])]
    nodes += [node("Sub", ["xu", "mean"], ["dev"]),
              node("Reciprocal", ["sd"], ["inv"]),
              node("Mul", ["dev", "inv"], ["nrm"]),
              node("Cast", ["nrm"], ["nrmt"], to=TensorProto.FLOAT),
              node("Flatten", ["scale"], ["s2d"], axis=0),
              node("Mul", ["nrmt", "s2d"], ["scaled"]),
              node("Flatten", ["bias"], ["b2d"], axis=0),
              node("Add", ["scaled", "b2d"], ["biased"]),
              node("Shape", ["x"], ["xshape"]),
              node("Reshape", ["biased", "xshape"], ["y"])]
    graph = helper.make_graph(
        nodes, "layer_norm_function",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("eps_after_sqrt", [False, True], ids=["layer norm", "near miss"])
def test_the_layer_norm_function_body(eps_after_sqrt):
    model = _layer_norm_function(eps_after_sqrt)
    mod = from_onnx(model)
    ops = [b.value.op.name for b in mod["main"].body.blocks[0].bindings
           if hasattr(b.value, "op")]
    assert ("relax.nn.layer_norm" in ops) != eps_after_sqrt, ops
    assert ("relax.sqrt" in ops) == eps_after_sqrt, ops
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    ex = relax.build(mod, target="c")
    rng = np.random.default_rng(10)
    for shape in ((3, 5, HIDDEN), (1, 2, HIDDEN)):
        x = (rng.standard_normal(shape) * 2 + 1).astype("float32")
        want = session.run(None, {"x": x})[0]
        for engine in ("python", "native"):
            got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=engine)
