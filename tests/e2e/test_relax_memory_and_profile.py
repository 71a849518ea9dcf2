"""Steady-state allocation of a built static-shape model; profiling and timing it."""
import numpy as np
import pytest

import rvm
from rvm.driver.relax_build import build
from rvm.vm.machine import VirtualMachine
from tests.e2e.test_spec_4_build_and_run import MyModule, mlp_inputs, numpy_mlp


@pytest.fixture(scope="module")
def bound():
    """The §3 MLP with its weights bound (static shapes), built for "c", and its inputs."""
    x, p = mlp_inputs()
    ex = build(MyModule, target="c", params={k: rvm.nd.array(v) for k, v in p.items()})
    return ex, x, p


def test_steady_state_allocates_only_returned_outputs(bound):
    ex, x, p = bound
    vm = VirtualMachine(ex, rvm.cpu())
    x_nd = rvm.nd.array(x)
    first = vm["main"](x_nd)  # first call: the pool fills (the output stays alive)
    before = vm.memory_stats()[0]
    kept = [vm["main"](x_nd) for _ in range(10)]  # every output stays alive
    after = vm.memory_stats()[0]
    assert after["allocations"] - before["allocations"] == len(kept)
    for out in kept:
        np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)
    del kept, first
    before = vm.memory_stats()[0]
    for _ in range(10):
        vm["main"](x_nd)  # outputs dropped at once: nothing new at all
    assert vm.memory_stats()[0]["allocations"] == before["allocations"]


def test_outputs_of_successive_calls_do_not_alias(bound):
    ex, x, _ = bound
    vm = VirtualMachine(ex, rvm.cpu())
    first = vm["main"](x)
    snapshot = first.numpy().copy()
    vm["main"](np.zeros_like(x))
    np.testing.assert_array_equal(first.numpy(), snapshot)


def test_profile_reports_each_kernel(bound):
    ex, x, _ = bound
    vm = VirtualMachine(ex, rvm.cpu())
    report = vm.profile("main", rvm.nd.array(x))
    kernel_rows = [r for r in report.rows if r["callee"] in ("linear0", "relu0")]
    assert sorted(r["callee"] for r in kernel_rows) == ["linear0", "linear0", "relu0"]
    assert all(r["function"] == "main" for r in kernel_rows)
    # each kernel call is attributed to the binding the user wrote
    assert sorted((r["callee"], r["binding"]) for r in kernel_rows) == [
        ("linear0", "lv0"), ("linear0", "out"), ("relu0", "lv1")]
    text = str(report)
    assert "linear0" in text and "relu0" in text


def test_time_evaluator_on_a_built_executable(bound):
    ex, x, _ = bound
    vm = VirtualMachine(ex, rvm.cpu())
    result = vm.time_evaluator("main", rvm.cpu(), number=20, repeat=3)(rvm.nd.array(x))
    assert len(result.results) == 3 and 0 < result.min <= result.median
    timer = vm.module.time_evaluator("main", rvm.cpu(), number=5)
    assert timer(rvm.nd.array(x)).mean > 0
