"""A reshape between kernels runs as ``vm.builtin.reshape``, a view of its input's memory
(RewriteDataflowReshape in the default pipeline), with the numbers of the copy it replaces,
on both engines; storage planning and the pooled allocator never hand out memory a view
still reads."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.transform import static_plan_block_memory as planner
from rvm.script import from_source

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype("float32")
W1 = RNG.standard_normal((6, 6)).astype("float32")
W2 = RNG.standard_normal((6, 6)).astype("float32")

# a's storage would be free after the reshape if the view did not keep it: b (same size,
# same dtype) would then be written over the memory v reads
SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 6), "float32"), w1: R.Tensor((6, 6), "float32"),
             w2: R.Tensor((6, 6), "float32")):
        with R.dataflow():
            a = R.matmul(x, w1)
            v = R.reshape(a, R.shape([6, 4]))
            b = R.matmul(x, w2)
            c = R.matmul(v, b)
            R.output(c)
        return c

    @R.function
    def returned(x: R.Tensor((4, 6), "float32"), w1: R.Tensor((6, 6), "float32")):
        with R.dataflow():
            a = R.matmul(x, w1)
            v = R.reshape(a, R.shape([24]))
            out = (v, a)
            R.output(out)
        return out

    @R.function
    def symbolic(x: R.Tensor(("n", 6), "float32"), w1: R.Tensor((6, 6), "float32")):
        n = T.int64()
        with R.dataflow():
            a = R.matmul(x, w1)
            v = R.reshape(a, R.shape([n * 3, 2]))
            c = R.sum(v, axis=[1])
            R.output(c)
        return c
'''


def _expected_main(x, w1, w2):
    return (x @ w1).reshape(6, 4) @ (x @ w2)


@pytest.fixture(scope="module")
def executable():
    return relax.build(from_source(SOURCE), target="c")


@pytest.fixture
def vm(executable, vm_engine):
    return relax.VirtualMachine(executable, rvm.cpu(), engine=vm_engine)


def test_the_reshapes_are_views_not_kernels(executable):
    text = executable.as_text()
    assert text.count("call  vm.builtin.reshape") == 3
    assert "reshape" not in text.split("modules:")[1].split("constants:")[0]


def test_a_view_keeps_its_storage_from_reuse(vm):
    for _ in range(2):  # the second call runs on the pooled storages of the first
        np.testing.assert_allclose(vm["main"](X, W1, W2).numpy(), _expected_main(X, W1, W2),
                                   rtol=1e-5, atol=1e-5)


def test_the_module_would_be_corrupted_if_the_planner_ignored_views(monkeypatch, vm_engine):
    """The check above can fail: a planner that took a reshape for a value of its own
    gives b the storage of a, and main a wrong result."""
    monkeypatch.setattr(planner, "_NO_ALIAS_OPS", planner._NO_ALIAS_OPS | {"relax.reshape"})
    broken = relax.VirtualMachine(relax.build(from_source(SOURCE), target="c"), rvm.cpu(),
                                  engine=vm_engine)
    assert not np.allclose(broken["main"](X, W1, W2).numpy(), _expected_main(X, W1, W2),
                           rtol=1e-3)


def test_a_returned_view_outlives_later_calls(vm):
    first = vm["returned"](X, W1)
    view, base = first[0], first[1]
    expected = (X @ W1).reshape(24)
    np.testing.assert_allclose(view.numpy(), expected, rtol=1e-5, atol=1e-5)
    for seed in range(3):  # later calls must not get the memory the first result views
        vm["returned"](np.full((4, 6), seed, "float32"), W1)
    np.testing.assert_allclose(view.numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(base.numpy(), X @ W1, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 4])
def test_a_symbolic_view(vm, n):
    x = RNG.standard_normal((n, 6)).astype("float32")
    np.testing.assert_allclose(vm["symbolic"](x, W1).numpy(),
                               (x @ W1).reshape(n * 3, 2).sum(axis=1), rtol=1e-5, atol=1e-5)

