"""Operators written as TVM's printer writes them (every attribute as a keyword, lists,
"void" dtypes, R.prim_value bounds) parse, infer, and print back to an equal module."""
import re

import pytest

from rvm.ir.base import assert_structural_equal
from rvm.relax.expr import Call, Var
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import from_source
from rvm.script.parser.diagnostics import ParseError

TVM_TEXT = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3, 8, 8), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32"),
             g: R.Tensor((4,), dtype="float32"), idx: R.Tensor((2,), dtype="int64")):
        n = T.int64()
        with R.dataflow():
            lv = R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="void")
            lv1 = R.nn.batch_norm(lv, g, g, g, g, axis=1, epsilon=1.0000000000000001e-05, center=True, scale=True, momentum=0.10000000000000001, training=False)
            lv2 = lv1[0]
            lv3 = R.clip(lv2, R.prim_value(0), R.prim_value(6))
            lv4 = R.nn.max_pool2d(lv3, pool_size=[2, 2], strides=[2, 2], dilation=[1, 1], padding=[0, 0, 0, 0], ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout="NCHW")
            lv5 = R.nn.adaptive_avg_pool2d(lv4, output_size=[1, 1], layout="NCHW", out_layout="NCHW")
            lv6 = R.reshape(lv5, R.shape([n, 4]))
            lv7 = R.strided_slice(lv6, axes=[1], begin=[0], end=[2], strides=[1], assume_inbound=False)
            lv8 = R.take(lv6, idx, axis=1, mode="fast")
            one = R.ones(R.shape([2]), dtype="float32")
            zero = R.zeros(R.shape([2]), dtype="float32")
            lv9 = R.nn.layer_norm(lv8, one, zero, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            lv10 = R.concat((lv7, lv9), axis=1)
            lv11 = R.nn.softmax(lv10, axis=-1)
            lv12 = R.argmax(lv11, axis=1, keepdims=False)
            gv = R.cumsum(lv12, axis=0, dtype="void", exclusive=False)
            R.output(gv)
        return gv
'''


def test_tvm_printed_operator_calls_parse_and_round_trip():
    mod = from_source(TVM_TEXT)
    main = mod["main"]
    n = main.params[0].struct_info.shape_values[0]
    ret = main.ret_struct_info
    assert ret.dtype == "int64" and ret.shape_values == (n,)
    sinfo = {b.var.name_hint: b.var.struct_info for b in main.body.blocks[0].bindings}
    assert sinfo["lv"].shape_values[0] is n and sinfo["lv"].shape_values[1].value == 4
    assert len(sinfo["lv1"].fields) == 3 and sinfo["lv1"].fields[1].shape_values[0].value == 4
    assert [d.value for d in sinfo["lv4"].shape_values[1:]] == [4, 4, 4]
    assert sinfo["lv10"].shape_values[0] is n and sinfo["lv10"].shape_values[1].value == 4
    assert_structural_equal(from_source(mod.script()), mod)


@pytest.mark.parametrize("body, message", [
    ("y = R.sum(x, axes=1)", "R.sum: sum() got an unexpected keyword argument 'axes'"),
    ("y = R.sum(x, axis='1')", "relax.sum: 'axis' must be an int or a list of ints, got '1'"),
    ("y = R.nn.conv2d(x, w, stride=2)", "unexpected keyword argument 'stride'"),
    ("y = R.nn.conv2d(x, w, groups=2)", "the 3 data channels are not divisible by groups=2"),
])
def test_bad_operator_calls_in_script_are_parse_errors(body, message):
    text = f'''
@R.function
def main(x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
    {body}
    return y
'''
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        from_source(text)
    assert ":4:" in str(info.value)  # the offending line


def test_declared_attributes_are_checked_on_any_call(infer):
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    with pytest.raises(ValueError, match=r"relax.sum: unknown attribute 'axes' \(did you mean "
                                         r"'axis'\?\); its attributes are axis, keepdims"):
        infer(Call(Op.get("relax.sum"), [x], {"axes": (1,)}))
    with pytest.raises(ValueError, match="relax.expand_dims: missing the attribute 'axis'"):
        infer(Call(Op.get("relax.expand_dims"), [x]))
    assert infer(Call(Op.get("relax.sum"), [x])).ndim == 0  # absent: the default (all axes)
    assert infer(Call(Op.get("relax.nn.conv2d"), [Var("d", TensorStructInfo((1, 3, 5, 5),
                                                                            "float32")),
                                                  Var("k", TensorStructInfo((2, 3, 3, 3),
                                                                            "float32"))])
                 ).shape_values[2].value == 3
