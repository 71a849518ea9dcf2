"""One Executable shared by threads, one VirtualMachine per thread: every call of a built
model gives exactly the single-threaded result (benchmarks/bench_threads.py measures the
throughput)."""
import threading

import numpy as np
import pytest

import rvm
from rvm.driver.relax_build import build
from rvm.vm.machine import VirtualMachine
from tests.e2e.test_spec_4_build_and_run import MyModule, mlp_inputs

THREADS, CALLS = 4, 200


@pytest.mark.parametrize("own_constants", [False, True])
def test_threads_sharing_an_executable_get_exact_results(own_constants):
    x, p = mlp_inputs()
    ex = build(MyModule, target="c", params={k: rvm.nd.array(v) for k, v in p.items()})
    inputs = [rvm.nd.array(x * (k + 1)) for k in range(THREADS)]
    expected = [VirtualMachine(ex, rvm.cpu())["main"](v).numpy() for v in inputs]
    results = [None] * THREADS
    start = threading.Barrier(THREADS)

    def work(k):
        main = VirtualMachine(ex, rvm.cpu(), own_constants=own_constants)["main"]
        start.wait()
        results[k] = [main(inputs[k]).numpy() for _ in range(CALLS)]

    workers = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for k in range(THREADS):
        assert len(results[k]) == CALLS
        assert all(np.array_equal(out, expected[k]) for out in results[k])
