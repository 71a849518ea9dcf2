"""One-node ONNX models whose operands are all graph inputs, built for the C target on both
VM engines and checked against onnx's reference evaluator: the shared part of the tests of
operands fed at run time (test_onnx_runtime_shapes.py, test_onnx_runtime_resize.py).
Import it after ``pytest.importorskip("onnx")``."""
import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import rvm
from rvm import relax
from rvm.relax.frontend.onnx import from_onnx

ENGINES = ("python", "native")


def one_node_model(op, inputs, slots=None, opset=19, **attrs):
    """A model of one ``op`` node whose graph inputs are ``inputs`` (name -> example array),
    read in the input slots ``slots`` (default: every input in order; "" omits a slot)."""
    node = helper.make_node(op, list(inputs) if slots is None else slots, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype),
                                       list(v.shape)) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def machines(model):
    """The model imported, built for the C target, and loaded on each VM engine."""
    ex = relax.build(from_onnx(model), target="c")
    return [relax.VirtualMachine(ex, rvm.cpu(), engine=e) for e in ENGINES]


def assert_matches_reference(name, model, inputs, variants, **tolerance):
    """Runs ``model`` on ``inputs`` and on each variant (inputs with some replaced) on both
    engines, comparing shape and values with onnx's reference evaluator."""
    reference = ReferenceEvaluator(model)
    vms = machines(model)
    for changes in [{}] + variants:
        feeds = {**inputs, **changes}
        want = reference.run(None, feeds)[0]
        for vm in vms:
            got = vm["main"](*feeds.values()).numpy()
            assert got.shape == want.shape, (name, changes)
            np.testing.assert_allclose(got, want, err_msg=f"{name} {changes}", **tolerance)
