import pytest

from rvm import tir
from rvm.relax.expr import Var
from rvm.relax.op import nn
from rvm.relax.struct_info import TensorStructInfo

n = tir.Var("n", "int64")


def t(shape=None, dtype="float32", ndim=-1):
    return Var("x", TensorStructInfo(shape, dtype, ndim))


def dims(sinfo):
    return [getattr(d, "value", d) for d in sinfo.shape_values]


def test_activations(infer):
    sinfo = TensorStructInfo((n, 8), "float32")
    for build in (nn.relu, nn.gelu, nn.gelu_tanh, nn.silu, nn.leakyrelu):
        assert infer(build(Var("x", sinfo))) is sinfo
    with pytest.raises(ValueError, match="relax.nn.gelu_tanh expects a float tensor, got int32"):
        infer(nn.gelu_tanh(t((2,), "int32")))
    with pytest.raises(TypeError, match="relax.nn.leakyrelu: 'alpha' must be a number"):
        nn.leakyrelu(t((2,)), "0.1")


def test_softmax_axis(infer):
    x = t((2, 5))
    assert infer(nn.softmax(x, axis=1)).ndim == 2
    assert nn.log_softmax(x).attrs == {"axis": -1}
    with pytest.raises(ValueError, match="axis 2 is out of range for a rank-2 tensor"):
        infer(nn.softmax(x, axis=2))
    with pytest.raises(ValueError, match="float tensor"):
        infer(nn.softmax(t((2,), "int32")))


def test_dropout_is_a_pair(infer):
    s = infer(nn.dropout(t((n, 4)), 0.1))
    assert len(s.fields) == 2 and s.fields[0].shape_values[0] is n
    with pytest.raises(ValueError, match=r"'rate' must be in \[0, 1\), got 1.0"):
        infer(nn.dropout(t((2,)), 1.0))


def test_conv2d(infer):
    s = infer(nn.conv2d(t((n, 3, 32, 32)), t((8, 3, 3, 3)), strides=2, padding=1))
    assert s.shape_values[0] is n and dims(s)[1:] == [8, 16, 16]
    s = infer(nn.conv2d(t((1, 4, 10, 9)), t((6, 2, 3, 2)), padding=(1, 2, 0, 1), dilation=2,
                        groups=2))
    assert dims(s) == [1, 6, 7, 10]
    s = infer(nn.conv2d(t((1, 7, 7, 3)), t((3, 3, 3, 5)), data_layout="NHWC",
                        kernel_layout="HWIO"))
    assert dims(s) == [1, 5, 5, 5]
    s = infer(nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 1, 1)), out_layout="NHWC"))
    assert dims(s) == [1, 8, 8, 4]
    assert infer(nn.conv2d(t((1, 3, 8, 8), "int8"), t((4, 3, 1, 1), "int8"),
                           out_dtype="int32")).dtype == "int32"
    assert infer(nn.conv2d(t(ndim=4), t((4, 3, 1, 1)))).ndim == 4


def test_conv2d_errors(infer):
    with pytest.raises(ValueError, match="argument 'weight' expects 3 input channels per group "
                                         r"\(data has 3 channels, groups=1\), got 2"):
        infer(nn.conv2d(t((1, 3, 8, 8)), t((4, 2, 3, 3))))
    with pytest.raises(ValueError, match="the 3 data channels are not divisible by groups=2"):
        infer(nn.conv2d(t((1, 3, 8, 8)), t((4, 1, 3, 3)), groups=2))
    with pytest.raises(ValueError, match="argument 'weight' expects a rank-4 tensor, got rank 3"):
        infer(nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3))))
    with pytest.raises(ValueError, match="the height window .* does not fit the input height 2"):
        infer(nn.conv2d(t((1, 3, 2, 8)), t((4, 3, 3, 3))))
    with pytest.raises(ValueError, match="'strides' must be positive, got"):
        nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3, 3)), strides=0)
    with pytest.raises(ValueError, match="'padding' expects 1 or 2 or 4 values, got 3"):
        nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3, 3)), padding=(1, 1, 1))
    with pytest.raises(ValueError, match="'data_layout': layout 'NCHW4c': only primal layouts"):
        nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3, 3)), data_layout="NCHW4c")
    with pytest.raises(ValueError, match="'kernel_layout': layout 'NCHW': expected a "
                                         "permutation of 'OIHW'"):
        nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3, 3)), kernel_layout="NCHW")
    with pytest.raises(TypeError, match="operand dtypes differ, float32 vs float16"):
        infer(nn.conv2d(t((1, 3, 8, 8)), t((4, 3, 3, 3), "float16")))


def test_conv2d_transpose(infer):
    s = infer(nn.conv2d_transpose(t((n, 4, 5, 5)), t((4, 3, 3, 3)), strides=2, padding=1,
                                  output_padding=1))
    assert s.shape_values[0] is n and dims(s)[1:] == [3, 10, 10]
    assert dims(infer(nn.conv2d_transpose(t((1, 4, 3, 3)), t((4, 1, 2, 2)), groups=2))) == \
        [1, 2, 4, 4]
    with pytest.raises(ValueError, match=r"'output_padding' \[2, 0\] must be smaller than the "
                                         "stride or the dilation"):
        infer(nn.conv2d_transpose(t((1, 4, 3, 3)), t((4, 1, 2, 2)), strides=2,
                                  output_padding=(2, 0)))
    with pytest.raises(ValueError, match="input channels .* expected 4, got 3"):
        infer(nn.conv2d_transpose(t((1, 4, 3, 3)), t((3, 1, 2, 2))))


def test_pools(infer):
    s = infer(nn.max_pool2d(t((n, 3, 7, 7)), 3, 2, padding=1))
    assert s.shape_values[0] is n and dims(s)[1:] == [3, 4, 4]
    assert dims(infer(nn.avg_pool2d(t((1, 3, 6, 5)), (3, 2), 2, padding=1, ceil_mode=True))) \
        == [1, 3, 4, 3]
    assert dims(infer(nn.max_pool2d(t((1, 6, 6, 2)), 2, 2, layout="NHWC"))) == [1, 3, 3, 2]
    with pytest.raises(ValueError, match=r"'padding' \[2, 2, 2, 2\] must be at most half the "
                                         r"\(dilated\) window, \[1, 1\]"):
        infer(nn.max_pool2d(t((1, 3, 8, 8)), 3, padding=2))
    with pytest.raises(ValueError, match="'pool_size' must be positive"):
        nn.avg_pool2d(t((1, 3, 8, 8)), (0, 2))
    assert dims(infer(nn.adaptive_avg_pool2d(t((1, 3, 7, 5)), (2, 1)))) == [1, 3, 2, 1]
    s = infer(nn.adaptive_avg_pool2d(t((n, 3, 7, 5))))
    assert s.shape_values[0] is n and dims(s)[1:] == [3, 7, 5]
    with pytest.raises(ValueError, match="argument 'data' expects a rank-4 tensor, got rank 3"):
        infer(nn.adaptive_avg_pool2d(t((3, 7, 5)), 1))


def test_normalizations(infer):
    x = t((n, 4, 8))
    assert infer(nn.layer_norm(x, t((8,)), t((8,)), axes=-1)) is x.struct_info
    assert infer(nn.layer_norm(x, t((4, 8)), t((4, 8)), axes=[1, 2])) is x.struct_info
    with pytest.raises(ValueError, match=r"argument 'gamma' expects shape \[8\], got \[4\]"):
        infer(nn.layer_norm(x, t((4,)), t((8,)), axes=-1))
    with pytest.raises(ValueError, match="argument 'beta' expects a rank-2 tensor"):
        infer(nn.layer_norm(x, t((4, 8)), t((8,)), axes=[1, 2]))
    assert infer(nn.rms_norm(x, t((8,)))) is x.struct_info
    with pytest.raises(ValueError, match="argument 'weight' expects shape"):
        infer(nn.rms_norm(x, t((4,))))
    y = t((2, 6, 3, 3))
    assert infer(nn.group_norm(y, t((6,)), t((6,)), 3, 1, [2, 3])) is y.struct_info
    with pytest.raises(ValueError, match="the 6 channels are not divisible by num_groups=4"):
        infer(nn.group_norm(y, t((6,)), t((6,)), 4, 1, [2, 3]))
    with pytest.raises(ValueError, match="must not contain the channel axis 1"):
        infer(nn.group_norm(y, t((6,)), t((6,)), 3, 1, [1, 2]))


def test_batch_norm(infer):
    x = t((n, 3, 4, 4))
    c = t((3,))
    s = infer(nn.batch_norm(x, c, c, c, c, axis=1))
    assert s.fields[0] is x.struct_info and dims(s.fields[1]) == [3] == dims(s.fields[2])
    assert nn.batch_norm(x, c, c, c, c, 1, training=False).attrs["training"] is False
    with pytest.raises(ValueError, match=r"argument 'moving_var' expects shape \[3\], got \[4\]"):
        infer(nn.batch_norm(x, c, c, c, t((4,)), axis=1))
    with pytest.raises(ValueError, match="axis 4 is out of range"):
        infer(nn.batch_norm(x, c, c, c, c, axis=4))


def test_attention(infer):
    s_ = tir.Var("s", "int64")
    s = infer(nn.attention(t((n, s_, 4, 8)), t((n, 7, 4, 8)), t((n, 7, 4, 2))))
    assert s.shape_values[0] is n and s.shape_values[1] is s_ and dims(s)[2:] == [4, 2]
    infer(nn.attention(t((2, 5, 4, 8)), t((2, 5, 4, 8)), t((2, 5, 4, 8)), t((5, 5)),
                       causal_mask="BottomRight", window_size=2))
    with pytest.raises(ValueError, match="key head size .* expected 8, got 6"):
        infer(nn.attention(t((2, 5, 4, 8)), t((2, 5, 4, 6)), t((2, 5, 4, 8))))
    with pytest.raises(ValueError, match=r"argument 'bias' of shape \[3, 5\] does not broadcast"):
        infer(nn.attention(t((2, 5, 4, 8)), t((2, 5, 4, 8)), t((2, 5, 4, 8)), t((3, 5))))
    with pytest.raises(ValueError, match="'causal_mask' expects one of 'TopLeft', "
                                         "'BottomRight', got 'Top'"):
        nn.attention(t((2, 5, 4, 8)), t((2, 5, 4, 8)), t((2, 5, 4, 8)), causal_mask="Top")
    with pytest.raises(ValueError, match="argument 'query' expects a rank-4 tensor"):
        infer(nn.attention(t((5, 4, 8)), t((2, 5, 4, 8)), t((2, 5, 4, 8))))
