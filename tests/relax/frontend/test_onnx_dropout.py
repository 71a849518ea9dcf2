"""from_onnx's Dropout in training mode: a mask drawn at run time from the Mersenne Twister
seeded by the node's ``seed`` (onnx's reference draws it the same way), a fresh seed per run
when the node has none, ratio and training_mode as run-time inputs, the mask output."""
import numpy as np
import pytest

import rvm
from rvm import relax

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from rvm.relax.frontend.onnx import OnnxImportError, from_onnx  # noqa: E402

pytestmark = pytest.mark.frontend

SHAPE = (3, 4, 5)


def _dropout_vm(target, **attrs):
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "z"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("t", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE),
         helper.make_tensor_value_info("z", TensorProto.BOOL, SHAPE)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return relax.VirtualMachine(relax.build(from_onnx(model), target=target), rvm.cpu())


def _run(vm, x, ratio, training):
    y, z = vm["main"](x, np.array(ratio, "float32"), np.array(training))
    return y.numpy(), z.numpy()


@pytest.mark.parametrize("target", ["llvm", "python"])
def test_the_seed_attribute_decides_the_mask_as_in_onnx_reference(target):
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(0).standard_normal(SHAPE).astype("float32")
    vm = _dropout_vm(target, seed=7)
    y, z = _run(vm, x, 0.75, True)
    want = np.random.RandomState(7).uniform(0, 1, SHAPE) >= 0.75
    np.testing.assert_array_equal(z, want)
    np.testing.assert_allclose(y, x * want * 4.0, rtol=1e-6)
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "z"], seed=7)
    ref_y, ref_z = ReferenceEvaluator(node).run(None, {"x": x, "r": np.float32(0.75),
                                                       "t": np.array(True)})
    np.testing.assert_array_equal(z, ref_z)
    np.testing.assert_allclose(y, ref_y, rtol=1e-6)
    y2, z2 = _run(vm, x, 0.75, True)  # the same seed gives the same mask on every run
    np.testing.assert_array_equal(z2, z)
    y3, z3 = _run(vm, x, 0.25, True)  # the ratio is a run-time input
    np.testing.assert_array_equal(z3, np.random.RandomState(7).uniform(0, 1, SHAPE) >= 0.25)
    np.testing.assert_allclose(y3, x * z3 / 0.75, rtol=1e-6)


def test_without_a_seed_each_run_draws_a_fresh_mask():
    x = np.ones(SHAPE, "float32")
    vm = _dropout_vm("llvm")
    masks = [_run(vm, x, 0.5, True) for _ in range(3)]
    for y, z in masks:
        np.testing.assert_allclose(y, 2.0 * z, rtol=1e-6)
        assert 0 < z.sum() < z.size
    assert not all(np.array_equal(masks[0][1], z) for _, z in masks[1:])


def test_training_mode_false_at_run_time_is_the_identity():
    x = np.random.default_rng(1).standard_normal(SHAPE).astype("float32")
    vm = _dropout_vm("llvm", seed=3)
    y, z = _run(vm, x, 0.5, False)
    np.testing.assert_array_equal(y, x)
    assert z.all()
    y, z = _run(vm, x, 0.0, True)  # ratio 0 keeps everything
    np.testing.assert_array_equal(y, x)
    assert z.all()


def test_a_ratio_outside_0_1_is_refused():
    vm = _dropout_vm("llvm", seed=0)
    with pytest.raises(ValueError, match=r"ratio must be in \[0, 1\), got 1.0"):
        _run(vm, np.ones(SHAPE, "float32"), 1.0, True)
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        initializer=[helper.make_tensor("r", TensorProto.FLOAT, [], [1.5]),
                     helper.make_tensor("t", TensorProto.BOOL, [], [True])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(OnnxImportError, match=r"Dropout.*ratio must be in \[0, 1\), got 1.5"):
        from_onnx(model)
