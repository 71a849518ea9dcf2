"""End-to-end latency of seed 004's MLP (784-128-10, relu) through relax.build and the VM
(both engines).

linear0, relu0 and linear1 are TensorIR kernels called with call_tir from
``main``, the weights bound as constants (BindParams), built for the "c"
target. For batch 1 and batch 64 the table gives the median latency of
``vm["main"](x)`` on the python and the native engine next to numpy's
``relu(x @ w0.T + b0) @ w1.T + b1`` in the same run, with its kernels called
directly from Python on preallocated tensors ("kernels us", the floor under the
VM's time), then where the VM's time goes (the fastest of ``repeat`` profiled
calls on the native engine, the one users run; the profiler's timers add to every
call site).

    python benchmarks/bench_e2e.py [--repeat 15] [--number 2000]
"""
import argparse
import platform
import statistics
import time

import numpy as np

import rvm
from rvm.driver.relax_build import build
from rvm.script.parser.entry import from_source
from rvm.vm.machine import ENGINES, VirtualMachine

MLP_TEMPLATE = '''
@I.ir_module
class MLP:
    @T.prim_func
    def linear0(X: T.Buffer((BATCH, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                Bias: T.Buffer((128,), "float32"), Z: T.Buffer((BATCH, 128), "float32")):
        Y = T.alloc_buffer((BATCH, 128), "float32")
        for i, j, k in T.grid(BATCH, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(BATCH, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + Bias[vj]

    @T.prim_func
    def relu0(X: T.Buffer((BATCH, 128), "float32"), Y: T.Buffer((BATCH, 128), "float32")):
        for i, j in T.grid(BATCH, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(X: T.Buffer((BATCH, 128), "float32"), W: T.Buffer((10, 128), "float32"),
                Bias: T.Buffer((10,), "float32"), Z: T.Buffer((BATCH, 10), "float32")):
        Y = T.alloc_buffer((BATCH, 10), "float32")
        for i, j, k in T.grid(BATCH, 10, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(BATCH, 10):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + Bias[vj]

    @R.function
    def main(x: R.Tensor((BATCH, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        cls = MLP
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((BATCH, 128), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((BATCH, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((BATCH, 10), "float32"))
            R.output(out)
        return out
'''

# Apache TVM's default relax.build of this model on the development machine (seconds).
TVM_FIGURES = {1: 200e-6, 64: 9.5e-3}


def mlp_module(batch):
    """Seed 004's MLP for a static ``batch``, in script form."""
    return from_source(MLP_TEMPLATE.replace("BATCH", str(batch)))


def mlp_params(seed=0):
    """Random weights of the 784-128-10 MLP."""
    rng = np.random.default_rng(seed)
    return {"w0": (rng.standard_normal((128, 784)) * 0.05).astype("float32"),
            "b0": (rng.standard_normal(128) * 0.05).astype("float32"),
            "w1": (rng.standard_normal((10, 128)) * 0.1).astype("float32"),
            "b1": (rng.standard_normal(10) * 0.1).astype("float32")}


def median_seconds(fn, number, repeat):
    """Median over ``repeat`` runs of the mean time of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def _kernels_only(ex, x_nd, params):
    """The kernels called directly from Python on preallocated tensors: the floor under
    the VM's time. The build fuses linear0 with relu0, so there are two."""
    lib = ex.kernel_libs[0]
    fused, linear1 = (lib.get_function(n) for n in ("fused_linear0_relu0", "linear1"))
    w0, b0, w1, b1 = (rvm.nd.array(params[k]) for k in ("w0", "b0", "w1", "b1"))
    batch = x_nd.shape[0]
    lv1 = rvm.nd.empty((batch, 128), "float32")
    out = rvm.nd.empty((batch, 10), "float32")

    def run_kernels():
        fused(x_nd, w0, b0, lv1)
        linear1(lv1, w1, b1, out)

    return run_kernels


def run(batch, params, number, repeat):
    """(row of the table, profile report) for one batch size."""
    start = time.perf_counter()
    ex = build(mlp_module(batch), target="c", params={k: rvm.nd.array(v)
                                                      for k, v in params.items()})
    build_s = time.perf_counter() - start
    vms = {engine: VirtualMachine(ex, rvm.cpu(), engine=engine) for engine in ENGINES}
    x = np.random.default_rng(batch).random((batch, 784), dtype=np.float32)
    w0, b0, w1, b1 = (params[k] for k in ("w0", "b0", "w1", "b1"))

    def numpy_mlp():
        return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1

    x_nd = rvm.nd.array(x)
    number = max(10, number // batch)
    vm_s = {}
    for engine, vm in vms.items():
        main = vm["main"]
        np.testing.assert_allclose(main(x_nd).numpy(), numpy_mlp(), rtol=1e-5, atol=1e-5)
        vm_s[engine] = median_seconds(lambda: main(x_nd), number, repeat)
    np_s = median_seconds(numpy_mlp, number, repeat)
    kernels_s = median_seconds(_kernels_only(ex, x_nd, params), number, repeat)
    info = ex.function_info("main")
    row = (batch, vm_s["python"], vm_s["native"], kernels_s, np_s, TVM_FIGURES[batch],
           info.end - info.start, build_s)
    reports = [vms["native"].profile("main", x_nd) for _ in range(repeat)]
    return row, min(reports, key=lambda r: r.total)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    params = mlp_params()
    rows, reports = [], []
    for batch in (1, 64):
        row, report = run(batch, params, args.number, args.repeat)
        rows.append(row)
        reports.append(report)
    print(f"python {platform.python_version()}, numpy {np.__version__}; median of "
          f"{args.repeat} repeats")
    print(f"{'batch':>5} {'python us':>10} {'native us':>10} {'kernels us':>11} {'numpy us':>9} "
          f"{'native x numpy':>15} {'TVM us':>9} {'native x TVM':>13} {'instrs':>7} "
          f"{'build ms':>9}")
    for batch, py_s, native_s, kernels_s, np_s, tvm_s, instrs, build_s in rows:
        print(f"{batch:>5} {py_s * 1e6:>10.1f} {native_s * 1e6:>10.1f} {kernels_s * 1e6:>11.1f} "
              f"{np_s * 1e6:>9.1f} {native_s / np_s:>15.2f} {tvm_s * 1e6:>9.1f} "
              f"{native_s / tvm_s:>13.3f} {instrs:>7} {build_s * 1e3:>9.1f}")
    for batch, report in zip((1, 64), reports):
        print(f"\nbatch {batch}, one call (native engine, profiled): " + report.table())


if __name__ == "__main__":
    main()
