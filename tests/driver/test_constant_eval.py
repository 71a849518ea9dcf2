"""FoldConstant folds call_tir on constants through the driver's evaluator."""
import doctest

import numpy as np

import rvm
import rvm.driver.constant_eval
from rvm import relax, te


def test_docstring_example():
    assert doctest.testmod(rvm.driver.constant_eval).failed == 0


def test_fold_constant_folds_call_tir_of_constants():
    def add_one(a):
        return te.compute(a.shape, lambda i: a[i] + 1.0, name="add_one")

    c = relax.const(np.arange(4, dtype="float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", params=[]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit_te(add_one, c))
        bb.emit_func_output(out)
    mod = bb.get()
    folded = relax.transform.FoldConstant()(mod)
    text = folded.script(show_meta=True)
    assert "call_tir" not in folded["main"].script()
    ex = relax.build(folded)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    np.testing.assert_array_equal(vm["main"]().numpy(), [1, 2, 3, 4])
    assert "metadata" in text
