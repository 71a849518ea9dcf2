import pytest

from rvm.relax.expr import Var
from rvm.relax.op import nn
from rvm.relax.struct_info import TensorStructInfo


def test_activations(infer):
    sinfo = TensorStructInfo((1, 8), "float32")
    for build in (nn.relu, nn.gelu, nn.silu):
        assert infer(build(Var("x", sinfo))) is sinfo


def test_softmax_axis(infer):
    x = Var("x", TensorStructInfo((2, 5), "float32"))
    assert infer(nn.softmax(x, axis=1)).ndim == 2
    assert nn.log_softmax(x).attrs == {"axis": -1}
    with pytest.raises(ValueError, match="axis 2 is out of range for a rank-2 tensor"):
        infer(nn.softmax(x, axis=2))
    with pytest.raises(ValueError, match="float tensor"):
        infer(nn.softmax(Var("i", TensorStructInfo((2,), "int32"))))
