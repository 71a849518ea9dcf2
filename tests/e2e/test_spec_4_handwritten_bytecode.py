"""SPEC §4's hand-written bytecode, as written, through the rvm.relax names."""
import numpy as np
import pytest


@pytest.fixture
def restore_test_vm_add():
    """Other tests register their own test.vm.add; put theirs back afterwards."""
    import rvm

    previous = rvm.get_global_func("test.vm.add", allow_missing=True)
    yield
    if previous is not None:
        rvm.register_func("test.vm.add", previous, override=True)
    else:
        rvm.runtime.remove_global_func("test.vm.add")


def test_spec_4_exec_builder_program(restore_test_vm_add):
    import rvm
    from rvm import relax

    @rvm.register_func("test.vm.add", override=True)
    def add(a, b):
        return rvm.nd.array(a.numpy() + b.numpy())

    a = rvm.nd.array(np.arange(4, dtype="float32"))
    b = rvm.nd.array(np.ones(4, dtype="float32"))

    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    ex = ib.get()      # checked: e.g. a register read before it is written is rejected
    out = relax.VirtualMachine(ex, rvm.cpu())["func0"](a, b)
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 4])
    assert isinstance(ex, relax.Executable)
    assert "test.vm.add" in ex.as_text()


def test_spec_4_rejects_read_before_write():
    from rvm import relax

    ib = relax.ExecBuilder()
    with ib.function("bad", num_inputs=1):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(5)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with pytest.raises(ValueError, match="bad"):
        ib.get()
