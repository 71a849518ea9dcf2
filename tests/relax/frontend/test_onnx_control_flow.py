"""from_onnx's If and Loop (Relax If and recursive Relax functions), and Slice with bounds
computed at run time, against onnxruntime (onnx's reference evaluator concatenates 2-D scan
outputs where the specification and onnxruntime stack them)."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
ort = pytest.importorskip("onnxruntime")

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


def _check(model, feeds, target="llvm"):
    """Runs ``model`` through rvm and onnxruntime; returns rvm's outputs and module."""
    mod = from_onnx(model)
    vm = relax.VirtualMachine(relax.build(mod, target=target), rvm.cpu())
    names = [v.name for v in model.graph.input]
    result = vm["main"](*[feeds[n] for n in names])
    got = [result] if len(model.graph.output) == 1 else list(result)
    got = [g.numpy() for g in got]
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)
    return got, mod


def _if_model():
    """y = x * 2 (then) or the first two elements of x + c (else), c an outer constant."""
    then = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                             [_info("t", F, None)])
    other = helper.make_graph(
        [_const("s", np.array([0], "int64")), _const("e", np.array([2], "int64")),
         helper.make_node("Slice", ["x", "s", "e"], ["x2"]),
         helper.make_node("Add", ["x2", "c"], ["u"])], "else", [], [_info("u", F, None)])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)
    return _model([node], [_info("cond", B, []), _info("x", F, [4])], [_info("y", F, None)],
                  [numpy_helper.from_array(np.array(10, "float32"), "c")])


@pytest.mark.parametrize("target", ["llvm", "python"])
def test_if_takes_each_branch_with_shapes_known_only_at_run_time(target):
    model = _if_model()
    x = np.arange(4, dtype="float32")
    (y,), mod = _check(model, {"cond": np.array(True), "x": x}, target)
    np.testing.assert_array_equal(y, 2 * x)
    (y,), _ = _check(model, {"cond": np.array(False), "x": x}, target)
    np.testing.assert_array_equal(y, x[:2] + 10)
    assert {"if0", "if0_then", "if0_else"} <= {gv.name_hint for gv in mod.get_global_vars()}


def test_if_on_a_constant_condition_converts_the_chosen_branch_in_place():
    model = _if_model()
    model.graph.initializer.append(numpy_helper.from_array(np.array(False), "cond"))
    del model.graph.input[0]
    (y,), mod = _check(model, {"x": np.ones(4, "float32")})
    np.testing.assert_array_equal(y, [11, 11])
    assert [gv.name_hint for gv in mod.get_global_vars() if "if" in gv.name_hint] == []


def _loop_model(body_nodes, body_outputs, carried, scans, extra_inputs=(), initializers=()):
    """Loop(M, cond, carried...) with the given body; graph outputs are the loop's.
    ``carried`` maps the loop-carried names to their initial shapes."""
    body_inputs = [_info("i", I64, []), _info("cond_in", B, [])] + \
        [_info(f"{n}_in", F, None) for n in carried]
    body = helper.make_graph(body_nodes, "body", body_inputs,
                             [_info(n, B if k == 0 else F, None)
                              for k, n in enumerate(body_outputs)])
    outs = [f"{n}_final" for n in carried] + [f"{n}_all" for n in scans]
    node = helper.make_node("Loop", ["M", "cond"] + [f"{n}0" for n in carried], outs,
                            body=body)
    inputs = [_info("M", I64, []), _info("cond", B, [])] + \
        [_info(f"{n}0", F, shape) for n, shape in carried.items()] + list(extra_inputs)
    return _model([node], inputs, [_info(o, F, None) for o in outs], initializers)


def _sum_loop():
    """s += x * i while s < limit (at most M times); scans s and i * w (w an outer input)."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("Add", ["s_in", "xi"], ["s"]),
             helper.make_node("ReduceSum", ["s"], ["total"], keepdims=0),
             helper.make_node("Less", ["total", "limit"], ["go"]),
             helper.make_node("Mul", ["w", "fi"], ["wi"])]
    return _loop_model(nodes, ["go", "s", "s", "wi"], {"s": [3]}, ["s", "wi"],
                       [_info("x", F, [3]), _info("w", F, [2, 2])],
                       [numpy_helper.from_array(np.array(40, "float32"), "limit")])


@pytest.mark.parametrize("target", ["llvm", "python"])
def test_loop_carries_values_scans_outputs_and_stops_on_its_condition(target):
    model = _sum_loop()
    x = np.array([1, 2, 3], "float32")
    w = np.arange(4, dtype="float32").reshape(2, 2)
    feeds = {"M": np.array(10), "cond": np.array(True), "s0": np.zeros(3, "float32"),
             "x": x, "w": w}
    (s, s_all, w_all), _ = _check(model, feeds, target)
    # sums 0, 6, 18, 36, 60: the fifth iteration gives a sum >= 40 and is the last
    assert s_all.shape == (5, 3) and w_all.shape == (5, 2, 2)
    feeds["M"] = np.array(2)  # the trip count stops it first
    (s, s_all, w_all), _ = _check(model, feeds, target)
    np.testing.assert_array_equal(s, x)
    # no iteration: the scan outputs are empty, of their element shape (onnxruntime gives
    # shape (0,), not knowing it)
    feeds["cond"] = np.array(False)
    vm = relax.VirtualMachine(relax.build(from_onnx(model), target=target), rvm.cpu())
    s, s_all, w_all = vm["main"](*[feeds[v.name] for v in model.graph.input])
    np.testing.assert_array_equal(s.numpy(), np.zeros(3))
    assert s_all.shape == (0, 3) and w_all.shape == (0, 2, 2)


def test_a_loop_carried_value_that_grows_gets_symbolic_dimensions():
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Unsqueeze", ["fi", "zero"], ["fi1"]),
             helper.make_node("Concat", ["v_in", "fi1"], ["v"], axis=0),
             helper.make_node("Identity", ["cond_in"], ["go"])]
    model = _loop_model(nodes, ["go", "v"], {"v": [1]}, [],
                        initializers=[numpy_helper.from_array(np.array([0], "int64"), "zero")])
    (v,), _ = _check(model, {"M": np.array(4), "cond": np.array(True),
                             "v0": np.array([7], "float32")})
    np.testing.assert_array_equal(v, [7, 0, 1, 2, 3])


def test_a_loop_whose_body_holds_an_if():
    then = helper.make_graph([helper.make_node("Add", ["a_in", "one"], ["t"])], "then", [],
                             [_info("t", F, None)])
    other = helper.make_graph([helper.make_node("Sub", ["a_in", "one"], ["u"])], "else", [],
                              [_info("u", F, None)])
    nodes = [helper.make_node("Mod", ["i", "two"], ["odd_i"]),
             helper.make_node("Cast", ["odd_i"], ["odd"], to=B),
             helper.make_node("If", ["odd"], ["a"], then_branch=then, else_branch=other),
             helper.make_node("Identity", ["cond_in"], ["go"])]
    model = _loop_model(nodes, ["go", "a", "a"], {"a": [1]}, ["a"], initializers=[
        numpy_helper.from_array(np.array(2, "int64"), "two"),
        numpy_helper.from_array(np.array([1], "float32"), "one")])
    (a, a_all), _ = _check(model, {"M": np.array(5), "cond": np.array(True),
                                   "a0": np.array([0.5], "float32")})
    np.testing.assert_array_equal(a_all.reshape(-1), [-0.5, 0.5, -0.5, 0.5, -0.5])


def test_slice_bounds_computed_at_run_time():
    nodes = [helper.make_node("ArgMax", ["x"], ["k"], keepdims=1),
             helper.make_node("Sub", ["k", "two"], ["start"]),
             helper.make_node("Slice", ["x", "start", "end"], ["y"])]
    model = _model(nodes, [_info("x", F, [6])], [_info("y", F, None)],
                   [numpy_helper.from_array(np.array([2], "int64"), "two"),
                    numpy_helper.from_array(np.array([9], "int64"), "end")])
    for x in ([0, 9, 1, 2, 3, 4], [1, 2, 3, 4, 9, 0], [1, 2, 3, 4, 5, 9]):
        (y,), _ = _check(model, {"x": np.array(x, "float32")})
        assert y.size  # a negative start counts from the end, as in numpy


def test_a_scan_output_without_a_static_shape_is_refused():
    nodes = [helper.make_node("Identity", ["cond_in"], ["go"]),
             helper.make_node("Unsqueeze", ["i", "zero"], ["end"]),
             helper.make_node("Slice", ["x", "zero", "end"], ["r"])]
    model = _loop_model(nodes, ["go", "r"], {}, ["r"], initializers=[
        numpy_helper.from_array(np.array([0], "int64"), "zero"),
        numpy_helper.from_array(np.arange(5, dtype="float32"), "x")])
    with pytest.raises(OnnxImportError, match=r"\(Loop, opset 18\): scan output 0 has the "
                                              r"shape .*; expected a static shape"):
        from_onnx(model)
