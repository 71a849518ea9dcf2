"""Unscheduled kernels from the c target, in GFLOPS next to numpy in the same run.

    python benchmarks/bench_kernels.py

Rows: seed 004's ``linear0`` (1x784 . 784x128 + bias, the intermediate ``Y``
a local buffer), the seed's whole MLP (linear0, relu, linear1: 784 -> 128 -> 10,
three kernel calls) and a 512x512x512 matmul, all written as TE computes with
no schedule, built with ``rvm.build(..., target="c")``. Times are medians of
repeated measurements; numpy runs the same computation (``x @ w.T + b``).
"""
import sys
import time

import numpy as np

import rvm
from rvm import te, tir
from rvm.driver.build_module import build
from rvm.ir.module import IRModule
from timing import alternating_medians

REPEAT = 9


def linear(m, n, name):
    X, W = te.placeholder((1, m), name="X"), te.placeholder((n, m), name="W")
    B = te.placeholder((n,), name="B")
    k = te.reduce_axis((0, m), name="k")
    Y = te.compute((1, n), lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="Y")
    Z = te.compute((1, n), lambda i, j: Y[i, j] + B[j], name="Z")
    return te.create_prim_func([X, W, B, Z]).with_attr("global_symbol", name)


def relu(n):
    X = te.placeholder((1, n), name="X")
    return te.create_prim_func([X, te.compute((1, n), lambda i, j: tir.max(X[i, j], 0.0),
                                              name="Y")])


def matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def main():
    mod = IRModule({"linear0": linear(784, 128, "linear0"), "relu0": relu(128),
                    "linear1": linear(128, 10, "linear1"), "matmul": matmul(512)})
    start = time.perf_counter()
    lib = build(mod, target="c")
    build_time = time.perf_counter() - start
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype("float32")  # noqa: E731
    x, w0, b0, w1, b1 = f32(1, 784), f32(128, 784), f32(128), f32(10, 128), f32(10)
    a, b = f32(512, 512), f32(512, 512)
    nd = {k: rvm.nd.array(v) for k, v in dict(x=x, w0=w0, b0=b0, w1=w1, b1=b1, a=a, b=b).items()}
    lv0, lv1, out = rvm.nd.empty((1, 128)), rvm.nd.empty((1, 128)), rvm.nd.empty((1, 10))
    c = rvm.nd.empty((512, 512))
    f_linear0, f_relu0, f_linear1, f_matmul = (lib[n] for n in ("linear0", "relu0", "linear1",
                                                                 "matmul"))

    def rvm_mlp():
        f_linear0(nd["x"], nd["w0"], nd["b0"], lv0)
        f_relu0(lv0, lv1)
        f_linear1(lv1, nd["w1"], nd["b1"], out)

    def numpy_mlp():
        return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1

    rvm_mlp()
    np.testing.assert_allclose(out.numpy(), numpy_mlp(), rtol=1e-3, atol=1e-3)
    f_matmul(nd["a"], nd["b"], c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-3, atol=1e-3)

    rows = [
        ("linear0 1x784 . 784x128 + b", 2 * 784 * 128,
         lambda: f_linear0(nd["x"], nd["w0"], nd["b0"], lv0), lambda: x @ w0.T + b0),
        ("MLP 784-128-10 (3 kernels)", 2 * 784 * 128 + 2 * 128 * 10, rvm_mlp, numpy_mlp),
        ("matmul 512x512x512", 2 * 512 ** 3, lambda: f_matmul(nd["a"], nd["b"], c),
         lambda: a @ b),
    ]
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; median of {REPEAT} "
          f"repeats; build {build_time * 1e3:.0f} ms")
    print(f"{'kernel (unscheduled)':32s}{'rvm us':>11s}{'GFLOPS':>9s}{'numpy us':>11s}"
          f"{'GFLOPS':>9s}{'x numpy':>9s}")
    for name, flops, ours, theirs in rows:
        med = alternating_medians({"ours": ours, "numpy": theirs}, REPEAT)
        t_ours, t_np = med["ours"], med["numpy"]
        print(f"{name:32s}{t_ours * 1e6:11.1f}{flops / t_ours / 1e9:9.2f}{t_np * 1e6:11.1f}"
              f"{flops / t_np / 1e9:9.2f}{t_ours / t_np:9.2f}")


if __name__ == "__main__":
    main()
