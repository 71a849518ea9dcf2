"""BindParams: named parameters become constants; symbolic dimensions they define are bound."""
import numpy as np
import pytest

from rvm.ir.base import assert_structural_equal
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Constant, Var
from rvm.relax.op.base import call_dps_packed
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.ndarray import array
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.bind_params import BindParams


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"), w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n",), "float32")):
        m, n = T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("env.double", (lv0,), R.Tensor((1, n * 2), "float32"))
            R.output(lv1)
        return lv1


def _params():
    rng = np.random.default_rng(0)
    return {"w0": rng.standard_normal((8, 5)).astype("float32"),
            "b0": rng.standard_normal(8).astype("float32")}


def _expected(params):
    x = Var("x", TensorStructInfo((1, 5), "float32"))
    w0, b0 = Constant(array(params["w0"])), Constant(array(params["b0"]))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(call_dps_packed("env.linear", (x, w0, b0),
                                          TensorStructInfo((1, 8), "float32")))
            gv = bb.emit_output(call_dps_packed("env.double", (lv0,),
                                                TensorStructInfo((1, 16), "float32")))
        bb.emit_func_output(gv)
    return bb.get()


def test_bind_numpy_params_and_symbolic_dims():
    params = _params()
    after = BindParams("main", params)(Module)
    assert_structural_equal(after, _expected(params))
    assert [p.name_hint for p in after["main"].params] == ["x"]
    assert len(Module["main"].params) == 3  # the input module is unchanged


def test_bind_ndarrays_and_partial_binding():
    params = _params()
    after = BindParams("main", {"b0": array(params["b0"])})(Module)
    main = after["main"]
    assert [p.name_hint for p in main.params] == ["x", "w0"]
    n = main.params[1].struct_info.shape_values[0]
    assert n.value == 8  # n was bound by b0's shape, so w0 is (8, m)
    assert main.ret_struct_info.shape_values[1].value == 16


def test_mismatched_constant_is_an_error_naming_the_parameter():
    params = _params()
    params["w0"] = params["w0"].astype("float64")
    with pytest.raises(ValueError, match=r"main: parameter 'w0' expects float32\[n, m\], "
                                         r"got float64\[8, 5\]"):
        BindParams("main", params)(Module)


def test_unknown_parameter_and_function():
    with pytest.raises(ValueError, match="has no parameter 'w9'"):
        BindParams("main", {"w9": np.zeros(2, "float32")})(Module)
    with pytest.raises(ValueError, match="no function named 'nope'"):
        BindParams("nope", {"w0": np.zeros(2, "float32")})(Module)


def test_empty_params_keep_the_module():
    assert BindParams("main", {})(Module) is Module
