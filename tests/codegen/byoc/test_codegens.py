"""The example codegens: the C source and the graph text they emit, and what they refuse."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.codegen.byoc.ccompiler import ccompiler_codegen, generate_c
from rvm.codegen.byoc.examplejson import examplejson_codegen, generate_graph
from rvm.relax.backend import get_patterns_with_prefix
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform import FuseOpsByPattern, MergeCompositeFunctions


@I.ir_module
class Seed:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)
            y = R.subtract(x, c)
            z = R.multiply(y, d)
            R.output(z)
        return z


@I.ir_module
class Dense:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((2, 4), "float32")):
        with R.dataflow():
            m = R.matmul(x, w)
            s = R.add(m, b)
            r = R.nn.relu(s)
            R.output(m, r)
        return (m, r)


def _regions(mod, codegen):
    merged = MergeCompositeFunctions()(FuseOpsByPattern(get_patterns_with_prefix(codegen))(mod))
    return [f for f in merged.functions.values() if f.get_attr("Codegen")]


def test_ccompiler_emits_seed_002s_structure():
    [func] = _regions(Seed, "ccompiler")
    source, names = generate_c([func])
    name = "fused_relax_add_relax_subtract_relax_multiply"
    assert names == [name]
    assert "#include <rvm/c_runtime_api.h>" in source
    for k, op in enumerate("+-*"):
        assert f"CSOURCE_BINARY_OP({name}_{k}, {op}, 100)" in source
    assert "float* buf_0 = (float*)malloc(sizeof(float) * 100);" in source
    assert f"  {name}_0(in0, in1, buf_0);\n  {name}_1(buf_0, in2, buf_1);\n" \
           f"  {name}_2(buf_1, in3, out0);" in source
    assert f"RVM_DLL int {name}(RVMValue* args" in source


def test_ccompiler_runs_matmul_relu_with_two_outputs():
    [func] = _regions(Dense, "ccompiler")
    [module] = ccompiler_codegen([func], {}, {})
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((2, 3), (3, 4), (2, 4)))
    m, r = rvm.nd.empty((2, 4), "float32"), rvm.nd.empty((2, 4), "float32")
    module[func.get_attr("global_symbol")](x, w, b, m, r)
    np.testing.assert_allclose(m.numpy(), x @ w, rtol=1e-5)
    np.testing.assert_allclose(r.numpy(), np.maximum(x @ w + b, 0), rtol=1e-5)
    with pytest.raises(ValueError, match="expects 3 inputs and 2 output tensors, got 2"):
        module[func.get_attr("global_symbol")](x, w)
    with pytest.raises(ValueError, match="argument 0 must be a compact float32 tensor"):
        module[func.get_attr("global_symbol")](np.zeros((3, 2), "float32"), w, b, m, r)


def test_examplejson_emits_the_seed_graph_text():
    [func] = _regions(Seed, "examplejson")
    assert generate_graph(func) == (
        "fused_relax_add_relax_subtract_relax_multiply\n"
        "  input 0 10 10\n  input 1 10 10\n  input 2 10 10\n  input 3 10 10\n"
        "  add 4 inputs: 0 1 shape: 10 10\n"
        "  sub 5 inputs: 4 2 shape: 10 10\n"
        "  mul 6 inputs: 5 3 shape: 10 10\n")
    [module] = examplejson_codegen([func], {}, {})
    assert module.type_key == "examplejson"


def _codegen_function(body_op, dtype="float32"):
    a = relax.Var("a", relax.TensorStructInfo((4,), dtype))
    bb = relax.BlockBuilder()
    with bb.function("offloaded", [a], attrs={"Codegen": "ccompiler"}):
        out = bb.emit(body_op(a))
        bb.emit_func_output(out)
    return bb.get()["offloaded"]


def test_codegens_name_what_they_cannot_generate():
    with pytest.raises(ValueError, match="operator 'relax.exp' is not supported; supported:"):
        generate_c([_codegen_function(relax.op.exp)])
    with pytest.raises(ValueError, match=r"uses \['int32'\]; only float32"):
        generate_c([_codegen_function(lambda a: relax.op.add(a, a), "int32")])
    with pytest.raises(ValueError, match="examplejson: operator 'relax.nn.relu'"):
        generate_graph(_codegen_function(relax.op.nn.relu))
