"""Executables with reference (python) kernels say why they cannot be exported."""
import numpy as np
import pytest

import rvm
from rvm import relax, te


def test_python_target_export_is_refused_with_the_reason(tmp_path):
    a = relax.Var("a", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", params=[a]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit_te(lambda x: te.compute(x.shape, lambda i: x[i] * 2.0), a))
        bb.emit_func_output(out)
    ex = relax.build(bb.get(), target="python")
    vm = relax.VirtualMachine(ex, rvm.cpu())
    np.testing.assert_array_equal(vm["main"](np.ones(4, "float32")).numpy(), [2, 2, 2, 2])
    with pytest.raises(NotImplementedError, match="build with target='c' to export"):
        ex.export_library(str(tmp_path / "m.rvm"))
