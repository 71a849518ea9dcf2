"""Narrow variants of an exported float32 ONNX model, for the benchmarks' int8 and fp16 rows.

``int8``: onnxruntime's ``quantize_dynamic`` (int8 weights; activations quantized per
call by DynamicQuantizeLinear; MatMulInteger products), after each ``Gemm`` (as
``torch.onnx.export`` writes ``nn.Linear``) is rewritten as ``MatMul`` + ``Add``, the form
the tool quantizes with standard operators. ``fp16``: every float initializer stored as
float16 and the graph computed in float16, its float32 input and output cast at the edges
(what ``onnxconverter_common``'s ``convert_float_to_float16(keep_io_types=True)`` makes).
Both take and return serialized models.
"""
import os
import tempfile

import numpy as np


def _matmul_form(model):
    """``model`` with each Gemm (alpha = beta = 1, transA = 0) as MatMul + Add."""
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    nodes = []
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type != "Gemm" or attrs.get("alpha", 1.0) != 1.0 or \
                attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
            nodes.append(node)
            continue
        x, w, *bias = node.input
        if attrs.get("transB", 0):
            weight = numpy_helper.to_array(inits[w]).T.copy()
            graph.initializer.remove(inits[w])
            w = f"{w}_t"
            graph.initializer.append(numpy_helper.from_array(weight, w))
        product = f"{node.output[0]}_matmul" if bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [x, w], [product]))
        if bias:
            nodes.append(helper.make_node("Add", [product, bias[0]], [node.output[0]]))
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def int8(data):
    """The model quantized by ``quantize_dynamic`` (int8 weights)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "int8.onnx")
        onnx.save(_matmul_form(onnx.load_from_string(data)), src)
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        return onnx.load(dst).SerializeToString()


def fp16(data):
    """The model with float16 weights computing in float16, float32 at its edges."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(data)
    graph = model.graph
    for k, init in enumerate(graph.initializer):
        if init.data_type == TensorProto.FLOAT:
            half = numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16),
                                           init.name)
            graph.initializer[k].CopyFrom(half)
    for node in graph.node:
        for attr in node.attribute:
            if attr.name == "value" and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(attr.t).astype(np.float16), attr.t.name))
    del graph.value_info[:]
    casts_in = []
    for value in graph.input:
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = f"{value.name}_fp16"
            casts_in.append(helper.make_node("Cast", [value.name], [inner],
                                             to=TensorProto.FLOAT16))
            for node in graph.node:
                node.input[:] = [inner if n == value.name else n for n in node.input]
    casts_out = []
    for value in graph.output:
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = f"{value.name}_fp16"
            for node in graph.node:
                node.output[:] = [inner if n == value.name else n for n in node.output]
            casts_out.append(helper.make_node("Cast", [inner], [value.name],
                                              to=TensorProto.FLOAT))
    nodes = casts_in + list(graph.node) + casts_out
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return model.SerializeToString()


#: variant name -> transform of a serialized float32 model
VARIANTS = {"int8": int8, "fp16": fp16}
