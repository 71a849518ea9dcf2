"""Batch inference on Ray: throughput of rvm.distributed.map_batches with 1 and 2 worker
actors against a single-process loop over the same batches, every result checked exactly.

    python benchmarks/bench_distributed.py [--rows 100000] [--batch 1000] [--rounds 3]

The model is seed 004's MLP (784-128-10, relu, weights bound) built for "c" at
a static ``batch``. The dataset is ``rows`` float32 rows of 784 in 20 blocks
(``ray.data.from_numpy``), order kept. One round of map_batches is measured
from the call (the workers' load check, actor start, executable load,
kernels from the cache) until the last batch is in the driver; the loop loads
the executable from the same bytes and calls ``vm["main"]`` on each batch.
Throughput is rows per second, the median of ``rounds`` rounds, over the whole
run and after the first batch is in (start-up excluded); Ray runs on a local
cluster of two CPUs (``ray.init(num_cpus=2)``).
"""
import argparse
import os
import statistics
import time

import numpy as np

import rvm
from bench_e2e import mlp_module, mlp_params
from rvm.bytecode.executable import Executable
from rvm.distributed import map_batches
from rvm.driver.relax_build import build
from rvm.vm.machine import VirtualMachine


def _timed(batches):
    """(seconds until the last batch, seconds until the first, rows in the first, outputs)."""
    start = time.perf_counter()
    out, first = [], None
    for batch in batches:
        out.append(batch)
        if first is None:
            first = time.perf_counter() - start
    return time.perf_counter() - start, first, len(out[0]), np.concatenate(out)


def single_process(data, x, batch):
    """Loads the executable and runs every batch in this process."""
    def batches():
        main = VirtualMachine(Executable.from_bytes(data), rvm.cpu())["main"]
        for i in range(0, len(x), batch):
            yield main(x[i:i + batch]).numpy()
    return _timed(batches())


def on_ray(data, dataset, batch, workers):
    """map_batches with ``workers`` actors, until the last batch is in this process."""
    def batches():
        result = map_batches(data, dataset, batch_size=batch, num_workers=workers)
        for b in result.iter_batches(batch_size=None, batch_format="numpy"):
            yield b["output"]
    return _timed(batches())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.rows % (20 * args.batch):
        parser.error("--rows must be a multiple of 20 batches (the model's batch is static)")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    params = mlp_params()
    ex = build(mlp_module(args.batch), target="c",
               params={k: rvm.nd.array(v) for k, v in params.items()})
    data = ex.save_to_bytes()
    x = np.random.default_rng(0).random((args.rows, 784), dtype=np.float32)
    dataset = ray.data.from_numpy(np.array_split(x, 20)).materialize()
    runs = {"single process": lambda: single_process(data, x, args.batch),
            "map_batches, 1 worker": lambda: on_ray(data, dataset, args.batch, 1),
            "map_batches, 2 workers": lambda: on_ray(data, dataset, args.batch, 2)}
    total = {name: [] for name in runs}
    steady = {name: [] for name in runs}
    first_batch = {name: [] for name in runs}
    expected = None
    for _ in range(args.rounds):
        for name, run in runs.items():
            secs, first, first_rows, out = run()
            if expected is None:
                expected = out
            elif not np.array_equal(out, expected):
                raise AssertionError(f"{name} computed a different result")
            total[name].append(args.rows / secs)
            steady[name].append((args.rows - first_rows) / (secs - first))
            first_batch[name].append(first)
    ray.shutdown()
    base, base_steady = (statistics.median(r["single process"]) for r in (total, steady))
    print(f"MLP 784-128-10, batch {args.batch}, {args.rows} rows in 20 blocks; exact results; "
          f"median of {args.rounds} rounds; {os.cpu_count()} cores, ray {ray.__version__}")
    print(f"{'':<24} {'first batch s':>13} {'rows/s':>9} {'x single':>9} "
          f"{'after first rows/s':>19} {'x single':>9}")
    for name in runs:
        rate, rate_steady = statistics.median(total[name]), statistics.median(steady[name])
        print(f"{name:<24} {statistics.median(first_batch[name]):>13.2f} {rate:>9.0f} "
              f"{rate / base:>9.2f} {rate_steady:>19.0f} {rate_steady / base_steady:>9.2f}")


if __name__ == "__main__":
    main()
