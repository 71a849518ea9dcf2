"""from_onnx on the shape arithmetic of models exported with symbolic batch and sequence
axes (what ``torch.onnx.export`` writes for Hugging Face transformers): Range up to a
symbolic length, a position table sliced to the sequence length, ``expand(batch, -1, -1)``
(Equal and Where over symbolic dimensions), Trilu over symbolic matrices. Each model is
built once for the C target and runs at several shapes on both VM engines, matching onnx's
reference evaluator; the output keeps the input's dimensions (no fresh run-time ones)."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

ENGINES = ("python", "native")


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.asarray(value), name))


def _dim(name, axis):
    """Nodes computing ``Shape(x)[axis]`` as a 1-element tensor ``name``."""
    return [helper.make_node("Shape", ["x"], [name + "_shape"]),
            _const(name + "_axis", np.array([axis])),
            helper.make_node("Gather", [name + "_shape", name + "_axis"], [name], axis=0)]


def _model(nodes, dims, initializers=(), opset=18, dtype=TensorProto.FLOAT):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", dtype, dims)],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        initializer=[numpy_helper.from_array(v, n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, shapes, dtype="float32"):
    """Runs ``model`` at each input shape on both engines against the reference; returns
    the imported module."""
    mod = from_onnx(model)
    ex = relax.build(mod, target="c")
    reference = ReferenceEvaluator(model)
    for shape in shapes:
        x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
        want = reference.run(None, {"x": x})[0]
        for engine in ENGINES:
            got = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](x).numpy()
            assert got.shape == want.shape, (shape, engine)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{shape} {engine}")
    return mod


def _output_dims(mod):
    return [getattr(d, "name_hint", None) or int(d) for d in mod["main"].ret_struct_info
            .shape_values]


def test_range_up_to_a_symbolic_length_keeps_the_dimension():
    """GPT-2's ``arange(seq)``: Range(0, seq, 1) over a dimension from Shape."""
    nodes = _dim("n", 1) + [_const("zero", np.array(0)), _const("one", np.array(1)),
                            helper.make_node("Squeeze", ["n"], ["limit"]),
                            helper.make_node("Range", ["zero", "limit", "one"], ["y"])]
    mod = _check(_model(nodes, ["batch", "seq"]), [(2, 3), (1, 7)])
    assert _output_dims(mod) == ["seq"]


def test_range_down_from_a_symbolic_start():
    """A symbolic start with a negative step: the length is computed at run time."""
    nodes = _dim("n", 1) + [_const("zero", np.array(0)), _const("step", np.array(-2)),
                            helper.make_node("Squeeze", ["n"], ["start"]),
                            helper.make_node("Range", ["start", "zero", "step"], ["y"])]
    _check(_model(nodes, ["batch", "seq"]), [(2, 3), (1, 8), (1, 0)])


def _position_table_model():
    """BERT's position embeddings: ``table[:seq]`` added to x (batch, seq, 2)."""
    table = np.arange(12, dtype="float32").reshape(6, 2)
    nodes = _dim("n", 1) + [_const("start", np.array([0])), _const("axis", np.array([0])),
                            helper.make_node("Slice", ["table", "start", "n", "axis"], ["pos"]),
                            helper.make_node("Add", ["x", "pos"], ["y"])]
    return _model(nodes, ["batch", "seq", 2], [("table", table)])


def test_a_table_sliced_to_a_symbolic_length_broadcasts_with_it():
    mod = _check(_position_table_model(), [(2, 3, 2), (1, 6, 2)])
    assert _output_dims(mod) == ["batch", "seq", 2]


def test_a_slice_end_past_a_static_axis_is_refused_at_run_time():
    """The slice is taken to end at ``seq`` (checked): a longer sequence than the table is
    a named error, not a result of the table's length."""
    ex = relax.build(from_onnx(_position_table_model()), target="c")
    for engine in ENGINES:
        vm = relax.VirtualMachine(ex, rvm.cpu(), engine=engine)
        with pytest.raises(ValueError, match="slice_end_within_axis"):
            vm["main"](np.zeros((1, 7, 2), "float32"))


def _expand_model(minus_ones):
    """ViT's ``cls_token.expand(batch, -1, -1)`` as the TorchScript exporter writes it:
    ``Where(Equal(shape, -1), 1, shape)`` as Expand's shape."""
    nodes = _dim("b", 0) + [
        _const("rest", np.array(minus_ones)),
        helper.make_node("Concat", ["b", "rest"], ["shape"], axis=0),
        _const("minus", -np.ones(3, "int64")), _const("ones", np.ones(3, "int64")),
        helper.make_node("Equal", ["shape", "minus"], ["is_minus"]),
        helper.make_node("Where", ["is_minus", "ones", "shape"], ["target"]),
        helper.make_node("Expand", ["token", "target"], ["y"])]
    return _model(nodes, ["batch", 3], [("token", np.arange(2, dtype="float32")
                                                   .reshape(1, 1, 2))])


def test_equal_of_a_dimension_and_minus_one_folds_at_import():
    """A dimension is never -1, so the comparison folds and Expand's target keeps
    ``batch``; no comparison is left to run."""
    mod = _check(_expand_model([-1, -1]), [(2, 3), (5, 3)])
    assert _output_dims(mod) == ["batch", 1, 2]
    assert "equal" not in mod.script()


def test_a_comparison_that_depends_on_a_dimension_runs_at_run_time():
    """``batch == 4`` cannot be decided at import: it is computed from the shape."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             _const("four", np.array([4, 3])),
             helper.make_node("Equal", ["shape", "four"], ["same"]),
             helper.make_node("Less", ["shape", "four"], ["less"]),
             helper.make_node("Concat", ["same", "less"], ["y"], axis=0)]
    _check(_model(nodes, ["batch", 3]), [(4, 3), (2, 3), (6, 3)])


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_over_symbolic_matrix_dimensions(upper):
    """GPT-2's and Llama's causal mask: the triangle of a (seq, seq) matrix."""
    nodes = [_const("k", np.array(1)), helper.make_node("Trilu", ["x", "k"], ["y"],
                                                         upper=upper)]
    _check(_model(nodes, ["batch", "rows", "cols"]), [(2, 3, 5), (1, 4, 2)])
