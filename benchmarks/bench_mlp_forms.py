"""Seed 004's MLP (784-128-10, relu) written two ways, built by the default pipeline:

* "high level": ``R.matmul(x, R.permute_dims(w))``, ``R.add``, ``R.nn.relu``, as a user
  (or an importer) writes it; legalization and fusion must turn the transposed
  weight into an NT matmul fused with its bias and activation;
* "emit_te dense": ``bb.emit_te(topi.nn.dense, x, w)``, ``topi.add``, ``topi.nn.relu``,
  as seed 004 section 6.4 writes it.

Weights are bound with ``params=``; both executables run on the native engine in
the same process and their medians are taken in alternation. The ratio column is
high level / emit_te (the issue asks for at most 1.2).

    python benchmarks/bench_mlp_forms.py [--batches 1 64 450] [--repeat 41]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import rvm
from rvm import relax, topi
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo

SIZES = (784, 128, 10)


def _params(seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for k, (m, n) in enumerate(zip(SIZES, SIZES[1:])):
        out[f"w{k}"] = (rng.standard_normal((n, m)) / np.sqrt(m)).astype("float32")
        out[f"b{k}"] = rng.standard_normal(n).astype("float32")
    return out


def mlp(batch, form):
    """The MLP as a Relax module with the weights as parameters of ``main``."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((batch, SIZES[0]), "float32"))
    params = []
    for k, (m, n) in enumerate(zip(SIZES, SIZES[1:])):
        params += [Var(f"w{k}", TensorStructInfo((n, m), "float32")),
                   Var(f"b{k}", TensorStructInfo((n,), "float32"))]
    with bb.function("main", [x] + params):
        with bb.dataflow():
            h = x
            for k in range(len(SIZES) - 1):
                w, b = params[2 * k], params[2 * k + 1]
                if form == "high level":
                    h = bb.emit(relax.op.matmul(h, relax.op.permute_dims(w)))
                    h = bb.emit(relax.op.add(h, b))
                    if k < len(SIZES) - 2:
                        h = bb.emit(relax.op.nn.relu(h))
                else:
                    h = bb.emit_te(topi.nn.dense, h, w)
                    h = bb.emit_te(topi.add, h, b)
                    if k < len(SIZES) - 2:
                        h = bb.emit_te(topi.nn.relu, h)
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def _time(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 450])
    parser.add_argument("--repeat", type=int, default=41)
    args = parser.parse_args(argv)
    params = _params()
    nd_params = {k: rvm.nd.array(v) for k, v in params.items()}
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; target 'c', untuned; "
          f"median of {args.repeat} alternating repeats")
    print(f"{'batch':>5s}{'high level us':>15s}{'emit_te us':>12s}{'numpy us':>10s}"
          f"{'high / emit_te':>16s}")
    for batch in args.batches:
        x = np.random.default_rng(batch).standard_normal((batch, SIZES[0])).astype("float32")
        xn = rvm.nd.array(x)
        expected = np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]
        runs = {}
        for form in ("high level", "emit_te"):
            vm = relax.VirtualMachine(relax.build(mlp(batch, form), params=nd_params), rvm.cpu())
            np.testing.assert_allclose(vm["main"](xn).numpy(), expected, rtol=1e-4, atol=1e-4)
            runs[form] = (lambda f=vm["main"]: f(xn))
        runs["numpy"] = lambda: (np.maximum(x @ params["w0"].T + params["b0"], 0)
                                 @ params["w1"].T + params["b1"])
        first = _time(runs["emit_te"], 3)
        number = max(1, int(0.005 / max(first, 1e-7)))
        samples = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, fn in runs.items():
                samples[name].append(_time(fn, number))
        med = {name: statistics.median(s) for name, s in samples.items()}
        print(f"{batch:5d}{med['high level'] * 1e6:15.1f}{med['emit_te'] * 1e6:12.1f}"
              f"{med['numpy'] * 1e6:10.1f}{med['high level'] / med['emit_te']:16.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
