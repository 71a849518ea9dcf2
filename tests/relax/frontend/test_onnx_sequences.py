"""from_onnx's sequences (Relax tuples when their length is known at import, runtime tuples
and the vm.builtin.sequence_* builtins otherwise), optionals (a value or None) and string
tensors (vm.builtin.string_*), built and run on both VM engines."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402
from rvm.relax.struct_info import TupleStructInfo  # noqa: E402

pytestmark = pytest.mark.frontend

F, I64, B, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING
ENGINES = ("python", "native")


def _seq(name, elem=F, shape=None):
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def _opt(name, type_proto):
    return helper.make_value_info(name, helper.make_optional_type_proto(type_proto))


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(model, *args, target="python"):
    """rvm's result of ``model`` on ``args`` per engine (the engines must agree)."""
    exe = relax.build(from_onnx(model), target=target)
    results = [relax.VirtualMachine(exe, rvm.cpu(), engine=e)["main"](*args) for e in ENGINES]
    for other in results[1:]:
        _assert_same(other, results[0])
    return results[0]


def _plain(value):
    if value is None or isinstance(value, np.ndarray):
        return value
    if hasattr(value, "numpy"):
        return value.numpy()
    return [_plain(v) for v in value]


def _assert_same(got, want):
    got, want = _plain(got), _plain(want)
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
    elif want is None:
        assert got is None
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


# -- sequences ----------------------------------------------------------------------------
def test_a_sequence_input_through_insert_at_erase_length():
    nodes = [helper.make_node("SequenceInsert", ["s", "x"], ["s1"]),
             _const("zero", np.array(0, "int64")),
             helper.make_node("SequenceInsert", ["s1", "x", "zero"], ["s2"]),
             helper.make_node("SequenceErase", ["s2", "p"], ["s3"]),
             helper.make_node("SequenceAt", ["s3", "p"], ["at"]),
             helper.make_node("SequenceLength", ["s3"], ["n"])]
    model = _model(nodes, [_seq("s"), _info("x", F, [2]), _info("p", I64, [])],
                   [_seq("s3"), _info("at", F, None), _info("n", I64, [])])
    a, b, x = (np.arange(3, dtype="float32"), np.ones((2, 2), "float32"),
               np.array([7, 8], "float32"))
    seq, at, n = _run(model, [a, b], x, np.array(-1, "int64"))
    _assert_same(seq, [x, a, b])  # inserted in front, appended, then the last erased
    _assert_same(at, b)
    assert int(n.numpy()) == 3


def test_a_sequence_of_known_length_is_a_tuple_at_import():
    nodes = [helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
             _const("one", np.array(1, "int64")),
             helper.make_node("SequenceAt", ["s", "one"], ["second"]),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s"], ["joined"], axis=0),
             helper.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=1, new_axis=1)]
    model = _model(nodes, [_info("x", F, [2]), _info("y", F, [2])],
                   [_seq("s"), _info("second", F, [2]), _info("n", I64, []),
                    _info("joined", F, [4]), _info("stacked", F, [2, 2])])
    mod = from_onnx(model)
    text = mod.script()
    assert "sequence" not in text  # tuple accesses and tensor operators only
    assert isinstance(mod["main"].ret_struct_info.fields[0], TupleStructInfo)
    x, y = np.array([1, 2], "float32"), np.array([3, 4], "float32")
    seq, second, n, joined, stacked = _run(model, x, y)
    _assert_same(seq, [x, y])
    _assert_same(second, y)
    assert int(n.numpy()) == 2
    _assert_same(joined, np.concatenate([x, y]))
    _assert_same(stacked, np.stack([x, y], 1))


def test_an_insert_at_a_run_time_position_keeps_what_the_elements_share():
    nodes = [helper.make_node("SequenceConstruct", ["x"], ["s"]),
             helper.make_node("SequenceInsert", ["s", "x", "p"], ["s1"]),
             helper.make_node("SequenceAt", ["s1", "p"], ["at"]),
             helper.make_node("Relu", ["at"], ["y"])]  # needs the element's shape
    model = _model(nodes, [_info("x", F, [2]), _info("p", I64, [])], [_info("y", F, [2])])
    x = np.array([-1, 2], "float32")
    _assert_same(_run(model, x, np.array(0, "int64")), np.maximum(x, 0))


def test_concat_from_a_sequence_input():
    model = _model([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=-1)],
                   [_seq("s", F, [2, None])], [_info("y", F, None)])
    parts = [np.ones((2, 1), "float32"), np.zeros((2, 3), "float32")]
    _assert_same(_run(model, parts), np.concatenate(parts, -1))
    with pytest.raises(ValueError, match="cannot join tensors of shapes"):
        _run(model, [np.ones((2, 1), "float32"), np.ones((3, 1), "float32")])


def test_split_to_sequence_and_sequence_map():
    body = helper.make_graph([helper.make_node("Add", ["e", "e"], ["d"])], "body",
                             [_info("e", F, None)], [_info("d", F, None)])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
             helper.make_node("SequenceMap", ["s"], ["doubled"], body=body)]
    model = _model(nodes, [_info("x", F, [2, 3])], [_seq("doubled")])
    x = np.arange(6, dtype="float32").reshape(2, 3)
    _assert_same(_run(model, x), [2 * x[:, k] for k in range(3)])


@pytest.mark.parametrize("target", ["python", "llvm"])
def test_a_sequence_grown_in_a_loop(target):
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["f"], to=F),
         helper.make_node("SequenceInsert", ["acc", "f"], ["acc_out"])], "body",
        [_info("i", I64, []), _info("c", B, []), _seq("acc", F, [])],
        [_info("c_out", B, []), _seq("acc_out", F, [])])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("Loop", ["n", "", "empty"], ["out"], body=body)]
    model = _model(nodes, [_info("n", I64, [])], [_seq("out")])
    got = _run(model, np.array(4, "int64"), target=target)
    _assert_same(got, [np.array(k, "float32") for k in range(4)])


def test_sequence_errors_name_the_node_or_the_position():
    model = _model([_const("p", np.array(5, "int64")),
                    helper.make_node("SequenceConstruct", ["x"], ["s"]),
                    helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")],
                   [_info("x", F, [2])], [_info("y", F, [2])])
    with pytest.raises(OnnxImportError, match=r"node 'at' \(SequenceAt.*position 5 is out of "
                                              r"range for a sequence of 1 tensors"):
        from_onnx(model)
    model = _model([helper.make_node("SequenceAt", ["s", "p"], ["y"])],
                   [_seq("s"), _info("p", I64, [])], [_info("y", F, None)])
    with pytest.raises(IndexError, match="position 3 is out of range for a sequence of 2"):
        _run(model, [np.ones(1, "float32")] * 2, np.array(3, "int64"))
    with pytest.raises(TypeError, match="expected a sequence"):
        _run(model, np.ones(1, "float32"), np.array(0, "int64"))
    model = _model([helper.make_node("Relu", ["s"], ["y"], name="relu")], [_seq("s")],
                   [_info("y", F, None)])
    with pytest.raises(OnnxImportError, match=r"node 'relu'.*expected a tensor of numbers, "
                                              r"got Sequence"):
        from_onnx(model)


# -- optionals ----------------------------------------------------------------------------
def test_optional_of_known_presence_folds_at_import():
    nodes = [helper.make_node("Optional", ["x"], ["o"]),
             helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("OptionalGetElement", ["o"], ["y"]),
             helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(
                 F, [2])),
             helper.make_node("OptionalHasElement", ["none"], ["has_none"])]
    tensor = helper.make_tensor_type_proto(F, [2])
    model = _model(nodes, [_info("x", F, [2])],
                   [_info("has", B, []), _info("y", F, [2]), _info("has_none", B, []),
                    _opt("none", tensor)])
    assert "optional" not in from_onnx(model).script()
    x = np.array([1, 2], "float32")
    has, y, has_none, none = _run(model, x)
    assert bool(has.numpy()) and not bool(has_none.numpy()) and none is None
    _assert_same(y, x)


def test_an_optional_input_is_a_value_or_none_at_run_time():
    tensor = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("If", ["has"], ["y"], then_branch=helper.make_graph(
                 [helper.make_node("OptionalGetElement", ["o"], ["v"])], "then", [],
                 [_info("v", F, [3])]), else_branch=helper.make_graph(
                 [_const("z", np.zeros(3, "float32"))], "else", [], [_info("z", F, [3])]))]
    model = _model(nodes, [_opt("o", tensor)], [_info("has", B, []), _info("y", F, [3])])
    x = np.array([1, 2, 3], "float32")
    has, y = _run(model, x)
    assert bool(has.numpy())
    _assert_same(y, x)
    has, y = _run(model, None)
    assert not bool(has.numpy())
    _assert_same(y, np.zeros(3, "float32"))
    get = _model([helper.make_node("OptionalGetElement", ["o"], ["v"])], [_opt("o", tensor)],
                 [_info("v", F, [3])])
    with pytest.raises(ValueError, match="the optional value is empty"):
        _run(get, None)


# -- strings ------------------------------------------------------------------------------
def test_equal_on_string_inputs_broadcasts_on_both_engines():
    model = _model([helper.make_node("Equal", ["a", "b"], ["y"])],
                   [_info("a", S, [2, 2]), _info("b", S, [2])], [_info("y", B, [2, 2])])
    a = np.array([["x", "é"], ["y", "x"]], dtype=object)
    got = _run(model, a, np.array(["x", "é"]))
    _assert_same(got, np.array([[True, True], [False, False]]))
    with pytest.raises(TypeError, match="the right operand must be a string tensor"):
        _run(model, a, np.array([1.0, 2.0], "float32"))


def test_a_string_constant_survives_export_and_load(tmp_path):
    words = helper.make_tensor("words", S, [3], [w.encode() for w in ("cat", "dög", "")])
    model = _model([helper.make_node("Equal", ["x", "words"], ["y"]),
                    helper.make_node("Identity", ["words"], ["copy"])],
                   [_info("x", S, [3])], [_info("y", B, [3]), _info("copy", S, [3])], [words])
    path = tmp_path / "strings.rvm"
    relax.build(from_onnx(model), target="python").export_library(str(path))
    loaded = rvm.runtime.load_module(str(path))
    for engine in ENGINES:
        y, copy = relax.VirtualMachine(loaded, rvm.cpu(), engine=engine)["main"](
            np.array(["cat", "dog", ""]))
        _assert_same(y, np.array([True, False, True]))
        assert copy.tolist() == ["cat", "dög", ""]


def test_string_operators_fold_or_are_refused():
    a = helper.make_tensor("a", S, [2], [b"p", b"q"])
    model = _model([helper.make_node("Equal", ["a", "a"], ["y"])], [], [_info("y", B, [2])],
                   [a])
    assert "string" not in from_onnx(model).script()  # folded at import
    model = _model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                   [_info("x", S, [2])], [_info("y", S, [2])])
    with pytest.raises(OnnxImportError, match=r"node 'add'.*Add does not take string "
                                              "tensors"):
        from_onnx(model)
    model = _model([helper.make_node("Equal", ["x", "n"], ["y"], name="eq")],
                   [_info("x", S, [2]), _info("n", F, [2])], [_info("y", B, [2])])
    with pytest.raises(OnnxImportError, match="expected two string tensors"):
        from_onnx(model)


def test_a_shape_with_symbolic_dims_becomes_a_tensor_at_run_time():
    model = _model([helper.make_node("Shape", ["x"], ["s"])], [_info("x", F, ["n", 3])],
                   [_info("s", I64, [2])])
    got = _run(model, np.zeros((5, 3), "float32"))
    _assert_same(got, np.array([5, 3], "int64"))
