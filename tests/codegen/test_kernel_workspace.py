"""Kernel heap allocations (workspaces) are charged to the running VM's memory_limit while
they live, on both targets (C: RVMBackendAllocWorkspace; python: the same budget) and
both engines; called without a VM, a kernel allocates with no budget."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I, relax as R, tir as T


@I.ir_module
class Scratch:
    @T.prim_func
    def scratch(x: T.handle, y: T.handle):  # a 4 MB scratch buffer
        X = T.match_buffer(x, (8,), "float32")
        Y = T.match_buffer(y, (8,), "float32")
        S = T.alloc_buffer((T.int64(1048576),), "float32")
        for i in range(8):
            with T.block("S"):
                vi = T.axis.remap("S", [i])
                S[vi * 131072 + 7] = X[vi] * T.float32(3)
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = S[vi * 131072 + 7] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = Scratch
        with R.dataflow():
            y = R.call_tir(cls.scratch, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


X = np.arange(8, dtype="float32")


@pytest.fixture(scope="module", params=["c", "python"])
def built(request):
    return relax.build(Scratch, target=request.param)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_workspace_past_the_memory_limit_is_refused_and_the_vm_stays_usable(built, engine):
    vm = relax.VirtualMachine(built, rvm.cpu(), engine=engine, memory_limit=1 << 20)
    with pytest.raises(MemoryError, match=r"scratch: \d+ more bytes would exceed the VM's "
                                          "memory_limit of 1048576 bytes"):
        vm["main"](X)
    assert vm.memory_stats()[0]["vm_bytes_in_use"] <= 64  # nothing of the kernel kept
    roomy = relax.VirtualMachine(built, rvm.cpu(), engine=engine, memory_limit=8 << 20)
    np.testing.assert_array_equal(roomy["main"](X).numpy(), X * 3 + 1)
    assert roomy.memory_stats()[0]["vm_bytes_in_use"] == 64  # the output's storage only


def test_a_kernel_called_without_a_vm_has_no_budget():
    f = rvm.build(Scratch["scratch"], target="c")["scratch"]
    y = rvm.nd.array(np.zeros(8, "float32"))
    f(rvm.nd.array(X), y)
    np.testing.assert_array_equal(y.numpy(), X * 3 + 1)
