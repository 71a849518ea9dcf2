"""detach_params: the arrays an importer kept as parameters come off the module."""
import numpy as np
import pytest

from rvm.relax.frontend import detach_params
from rvm.ir.module import IRModule
from rvm.script import ir as I
from rvm.script import relax as R

pytestmark = pytest.mark.frontend


@I.ir_module
class Plain:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        return x


def test_a_module_without_params_comes_back_equal_and_empty():
    mod, params = detach_params(Plain)
    assert params == {} and mod["main"] is Plain["main"]


def test_params_that_are_not_arrays_are_rejected():
    bad = IRModule({"main": Plain["main"].with_attr("params", [np.ones(2)])})
    with pytest.raises(ValueError, match="'params' attribute of 'main' must be a list of "
                                         "NDArrays, got \\['ndarray'\\]"):
        detach_params(bad)
    with pytest.raises(TypeError, match="expects an IRModule, got Function"):
        detach_params(Plain["main"])
