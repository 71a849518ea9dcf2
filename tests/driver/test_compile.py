"""rvm.compile and the options of TVM's relax.build (exec_mode, relax_pipeline, tir_pipeline)."""
import numpy as np
import pytest

import rvm
from rvm import relax, te
from rvm.runtime.kernel_library import KernelLibrary
from rvm.script import from_source

ADD = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        z = R.add(x, y)
        return z
'''


def _kernel():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    return te.create_prim_func([A, B])


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_exec_modes_run_the_same(exec_mode):
    ex = relax.build(from_source(ADD), target="llvm", exec_mode=exec_mode)
    x = np.arange(4, dtype="float32")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](x, x)
    np.testing.assert_allclose(out.numpy(), 2 * x)


def test_relax_build_checks_tvm_options():
    mod = from_source(ADD)
    with pytest.raises(ValueError, match="exec_mode must be one of"):
        relax.build(mod, exec_mode="jit")
    with pytest.raises(ValueError, match="tir_pipeline must be 'default'"):
        relax.build(mod, tir_pipeline="custom")
    with pytest.raises(ValueError, match="either pipeline= or relax_pipeline="):
        relax.build(mod, pipeline=None, relax_pipeline="default")
    ex = relax.build(mod, relax_pipeline="default", system_lib=False)
    assert "main" in ex.as_text()


def test_compile_picks_the_build():
    ex = rvm.compile(from_source(ADD), target="c")
    assert isinstance(ex, relax.Executable)
    lib = rvm.compile(_kernel(), target=rvm.target.Target("llvm --num-cores=1"))
    assert isinstance(lib, KernelLibrary)
    a = rvm.nd.array(np.arange(4, dtype="float32"))
    b = rvm.nd.empty((4,), "float32")
    lib["main"](a, b)
    np.testing.assert_allclose(b.numpy(), 2 * a.numpy())
    with pytest.raises(TypeError, match="IRModule, a relax Function or a PrimFunc"):
        rvm.compile("main")
