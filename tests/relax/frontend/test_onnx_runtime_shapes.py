"""from_onnx with shape-deciding operands fed at run time (Reshape's shape, Expand's shape,
ConstantOfShape's input, Tile's repeats, Range's bounds, Squeeze/Unsqueeze's axes,
Slice's starts, ends, axes and steps, Pad's pads and axes, SplitToSequence's sizes) and
Trilu's k: the model is compiled for the C target and runs
on both VM engines, matching onnx's reference evaluator; values that would make a kernel
read or write out of bounds are refused at run time with a named error."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rvm.relax.frontend.onnx import from_onnx  # noqa: E402
from tests.relax.frontend.onnx_runtime_models import (  # noqa: E402
    assert_matches_reference, machines, one_node_model,
)

pytestmark = pytest.mark.frontend

X = np.arange(24, dtype="float32").reshape(2, 3, 4)
CASES = {
    "reshape": ("Reshape", {"x": X, "s": np.array([4, 0, -1])}, {},
                [{"s": np.array([24, 1, 1])}, {"s": np.array([0, 0, -1])}]),
    "reshape_allowzero": ("Reshape", {"x": X, "s": np.array([6, 4])}, {"allowzero": 1},
                          [{"s": np.array([2, 12])}]),
    "expand": ("Expand", {"x": np.arange(3, dtype="float32").reshape(3, 1),
                          "s": np.array([2, 1, 6])}, {}, [{"s": np.array([1, 3, 1])}]),
    "constant_of_shape": ("ConstantOfShape", {"s": np.array([2, 3])},
                          {"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])},
                          [{"s": np.array([0, 5])}]),
    "tile": ("Tile", {"x": X[0], "r": np.array([2, 3])}, {}, [{"r": np.array([1, 0])}]),
    "range_float": ("Range", {"a": np.array(1.0, "float32"), "b": np.array(7.5, "float32"),
                              "d": np.array(2.0, "float32")}, {},
                    [{"b": np.array(-1.0, "float32")}]),
    "range_int": ("Range", {"a": np.array(10), "b": np.array(1), "d": np.array(-3)}, {},
                  [{"d": np.array(-1)}]),
    "unsqueeze": ("Unsqueeze", {"x": X[0], "a": np.array([0, -1])}, {},
                  [{"a": np.array([1, 3])}, {"a": np.array([2, 0])}]),
    "squeeze": ("Squeeze", {"x": X.reshape(1, 2, 1, 12), "a": np.array([0, -2])}, {},
                [{"a": np.array([2, 0])}]),
    "slice": ("Slice", {"x": X[0], "s": np.array([1, -2]), "e": np.array([2, 100])}, {},
              [{"s": np.array([0, 0]), "e": np.array([-1, 2])}]),
    "slice_axes_steps": ("Slice", {"x": X, "s": np.array([0, 1]), "e": np.array([2, -1]),
                                   "a": np.array([0, 2]), "t": np.array([1, 2])}, {},
                         [{"a": np.array([-1, 1]), "t": np.array([-1, 3]),
                           "s": np.array([100, -9]), "e": np.array([-100, 9])},
                          {"s": np.array([-2 ** 63, 2 ** 62]), "e": np.array([2 ** 63 - 1, 0]),
                           "t": np.array([2 ** 63 - 1, -2 ** 63 + 1])}]),
    "slice_axes": ("Slice", {"x": X, "s": np.array([1]), "e": np.array([3]),
                             "a": np.array([2])}, {}, [{"a": np.array([-2])}]),
    "trilu": ("Trilu", {"x": X[0], "k": np.array(1)}, {}, [{"k": np.array(-1)}]),
    "tril": ("Trilu", {"x": X[0], "k": np.array(0)}, {"upper": 0}, [{"k": np.array(2)}]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_shape_operand_fed_at_run_time_matches_the_reference(name):
    op, inputs, attrs, variants = CASES[name]
    assert_matches_reference(name, one_node_model(op, inputs, **attrs), inputs, variants)


def test_the_shape_operand_is_not_folded_into_the_module():
    """One compiled model serves every shape: the operand stays a parameter."""
    model = one_node_model("Reshape", {"x": X, "s": np.array([4, 0, -1])})
    assert [p.name_hint for p in from_onnx(model)["main"].params] == ["x", "s"]


BAD = {
    "reshape_element_count": ("Reshape", {"x": X, "s": np.array([4, 6])},
                              {"s": np.array([5, 5])}, "reshape_element_count"),
    "reshape_two_wildcards": ("Reshape", {"x": X, "s": np.array([4, 6, 1])},
                              {"s": np.array([-1, -1, 2])}, "reshape_element_count"),
    "expand_mismatch": ("Expand", {"x": np.ones((3, 1), "float32"), "s": np.array([3, 2])},
                        {"s": np.array([4, 2])}, "expand_shape"),
    "squeeze_not_one": ("Squeeze", {"x": np.ones((1, 2, 3), "float32"), "a": np.array([0])},
                        {"a": np.array([1])}, "squeeze_element_count"),
    "range_zero_delta": ("Range", {"a": np.array(0), "b": np.array(4), "d": np.array(1)},
                         {"d": np.array(0)}, "range_delta_nonzero"),
    "slice_step_zero": ("Slice", {"x": X, "s": np.array([0]), "e": np.array([2]),
                                  "a": np.array([1]), "t": np.array([1])},
                        {"t": np.array([0])}, "slice_steps_nonzero"),
    "slice_axis_twice": ("Slice", {"x": X, "s": np.array([0, 0]), "e": np.array([2, 2]),
                                   "a": np.array([1, 0])},
                         {"a": np.array([1, -2])}, "slice_axes_unique_and_in_range"),
    "slice_axis_out_of_range": ("Slice", {"x": X, "s": np.array([0]), "e": np.array([2]),
                                          "a": np.array([1])},
                                {"a": np.array([3])}, "slice_axes_unique_and_in_range"),
    "constant_of_shape_negative": ("ConstantOfShape", {"s": np.array([2, 3])},
                                   {"s": np.array([-2, 3])}, "must be >= 0"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_run_time_shape_operand_is_a_named_error(name):
    op, inputs, bad, message = BAD[name]
    for vm in machines(one_node_model(op, inputs)):
        vm["main"](*inputs.values())  # the good value runs
        with pytest.raises(ValueError, match=message):
            vm["main"](*{**inputs, **bad}.values())


def test_an_empty_tensor_reshaped_to_a_run_time_shape():
    x = np.zeros((0, 3, 4), "float32")
    model = one_node_model("Reshape", {"x": x, "s": np.array([3, 4, 0])}, allowzero=1)
    for vm in machines(model):
        assert vm["main"](x, np.array([3, 4, 0])).numpy().shape == (3, 4, 0)
        with pytest.raises(ValueError, match="reshape_element_count"):
            vm["main"](x, np.array([3, 4, 1]))


def test_a_fused_kernel_waits_for_the_match_cast_of_its_run_time_dimensions():
    """Relu fused with the Expand to a run-time shape: the fused call must come after the
    match_cast that binds the expanded dimension (FuseOps orders groups by it)."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Expand", ["r", "s"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1]),
                     helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([[-1.0], [2.0], [3.0]], "float32")
    for vm in machines(model):
        np.testing.assert_array_equal(vm["main"](x, np.array([3, 4])).numpy(),
                                      np.broadcast_to(np.maximum(x, 0), (3, 4)))


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceL2", "ReduceLogSumExp"])
def test_a_reduction_over_run_time_axes_matches_the_reference(op, keepdims):
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype("float32")
    model = one_node_model(op, {"x": x, "a": np.array([0, 2])}, opset=18, keepdims=keepdims)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for axes in ([0, 2], [-1, 1], [1, 0]):
            want = reference.run(None, {"x": x, "a": np.array(axes)})[0]
            got = vm["main"](x, np.array(axes)).numpy()
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum_over_a_run_time_axis(reverse):
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    model = one_node_model("CumSum", {"x": x, "a": np.array(0)}, opset=14, reverse=reverse)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for axis in (0, 1, 2, -1):
            want = reference.run(None, {"x": x, "a": np.array(axis)})[0]
            np.testing.assert_array_equal(vm["main"](x, np.array(axis)).numpy(), want)
        with pytest.raises(ValueError, match="cumsum_axis_in_range"):
            vm["main"](x, np.array(3))


def test_reduction_axes_of_length_zero_need_no_value():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    model = one_node_model("ReduceSum", {"x": x, "a": np.zeros(0, "int64")}, opset=18, keepdims=0)
    for vm in machines(model):
        np.testing.assert_allclose(vm["main"](x, np.zeros(0, "int64")).numpy(), x.sum())


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceProd", "ReduceLogSumExp"])
def test_a_reduction_of_no_elements_over_run_time_axes_is_its_identity(op, keepdims):
    x = np.zeros((2, 0, 4), "float32")
    model = one_node_model(op, {"x": x, "a": np.array([1])}, opset=18, keepdims=keepdims)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for axes in ([1], [0], [-1]):
            want = reference.run(None, {"x": x, "a": np.array(axes)})[0]
            got = vm["main"](x, np.array(axes)).numpy()
            assert got.shape == want.shape, axes
            np.testing.assert_array_equal(got, want)


def test_one_hot_with_a_run_time_depth():
    indices = np.array([[1, -1], [0, 7]], "int64")
    values = np.array([0.0, 5.0], "float32")
    model = one_node_model("OneHot", {"i": indices, "d": np.array(3.0, "float32"), "v": values},
                   opset=11, axis=1)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for depth in (3.0, 8.0, 1.0):
            feeds = {"i": indices, "d": np.array(depth, "float32"), "v": values}
            want = reference.run(None, feeds)[0]
            np.testing.assert_array_equal(vm["main"](*feeds.values()).numpy(), want)
        with pytest.raises(ValueError, match="one_hot_depth_positive"):
            vm["main"](indices, np.array(0.0, "float32"), values)


def test_split_into_run_time_sizes():
    x = np.arange(12, dtype="float32").reshape(2, 6)
    node = helper.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=1)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
                      helper.make_tensor_value_info("s", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abc"])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    for vm in machines(model):
        for sizes in ([1, 2, 3], [0, 6, 0], [3, 3, 0]):
            got = [t.numpy() for t in vm["main"](x, np.array(sizes))]
            want = np.split(x, np.cumsum(sizes)[:-1], axis=1)
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
        with pytest.raises(ValueError, match="split_total"):
            vm["main"](x, np.array([1, 2, 2]))
        with pytest.raises(ValueError, match="split_sizes_non_negative"):
            vm["main"](x, np.array([4, -1, 3]))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_by_run_time_amounts(mode):
    """The constant mode also checks FuseOps orders a fused kernel after the match_cast
    that defines a dimension its arguments are computed from."""
    x = np.arange(12, dtype="float32").reshape(3, 4)
    inputs = {"x": x, "p": np.array([1, 0, 2, 3])}
    if mode == "constant":
        inputs["v"] = np.array(-1.5, "float32")
    model = one_node_model("Pad", inputs, opset=18, mode=mode)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for pads in ([1, 0, 2, 3], [0, 2, 0, 1], [0, 0, 0, 0]):
            feeds = {**inputs, "p": np.array(pads)}
            want = reference.run(None, feeds)[0]
            got = vm["main"](*feeds.values()).numpy()
            assert got.shape == want.shape, pads
            np.testing.assert_array_equal(got, want)
        if mode == "constant":  # negative amounts crop
            got = vm["main"](x, np.array([-1, 1, 1, -2]), inputs["v"]).numpy()
            np.testing.assert_array_equal(got, np.pad(x[1:, :-2], ((0, 1), (1, 0)),
                                                      constant_values=-1.5))


def test_pad_along_run_time_axes():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    inputs = {"x": x, "p": np.array([1, 0, 2, 3]), "v": np.array(-1.5, "float32"),
              "a": np.array([0, 1])}
    model = one_node_model("Pad", inputs, opset=18)
    reference = ReferenceEvaluator(model)
    for vm in machines(model):
        for changes in ({}, {"a": np.array([-1, 0])}, {"p": np.array([2, 0, 1, 3]),
                                                       "a": np.array([1, -2])}):
            feeds = {**inputs, **changes}
            want = reference.run(None, feeds)[0]
            got = vm["main"](*feeds.values()).numpy()
            assert got.shape == want.shape, changes
            np.testing.assert_array_equal(got, want)
        with pytest.raises(ValueError, match="pad_axes_unique_and_in_range"):
            vm["main"](*{**inputs, "a": np.array([1, 1])}.values())


def test_split_to_sequence_into_run_time_sizes():
    x = np.arange(12, dtype="float32").reshape(2, 6)
    node = helper.make_node("SplitToSequence", ["x", "s"], ["q"], axis=1)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
                      helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_sequence_value_info("q", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    for vm in machines(model):
        for sizes in ([2, 4], [6, 0]):
            got = [t.numpy() for t in vm["main"](x, np.array(sizes))]
            want = np.split(x, np.cumsum(sizes)[:-1], axis=1)
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
        with pytest.raises(ValueError, match="split_total"):
            vm["main"](x, np.array([2, 2]))


@pytest.mark.parametrize("steps", [None, [-1, 2]])
def test_slice_of_symbolic_axes_by_run_time_starts_and_ends(steps):
    """Starts and ends fed at run time on axes whose lengths are symbolic (negative ones
    counted from the end, out-of-range ones clamped), as ONNX's CenterCropPad body slices
    the output of a run-time Pad; the steps are an initializer."""
    node = helper.make_node("Slice", ["x", "s", "e"] + (["a", "t"] if steps else []), ["y"])
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("e", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("a", TensorProto.INT64, [2], [0, 1]),
         helper.make_tensor("t", TensorProto.INT64, [2], steps)] if steps else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    vms = machines(model)
    step = steps or [1, 1]
    for shape, starts, ends in [((5, 4), [1, -3], [4, 100]), ((3, 6), [-10, 2], [-1, 5]),
                                ((4, 2), [3, 0], [1, -5]), ((4, 3), [100, -100], [-100, 100])]:
        x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
        want = x[starts[0]:ends[0]:step[0], starts[1]:ends[1]:step[1]]
        for vm in vms:
            got = vm["main"](x, np.array(starts), np.array(ends)).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {starts} {ends}")
