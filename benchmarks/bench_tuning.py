"""Tuned kernels (rvm.meta_schedule, default space) next to untuned ones, numpy and peers.

    python benchmarks/bench_tuning.py [--trials 64] [--work-dir DIR] [--skip-search]
                                      [--only matmul|mlp|search] [--search-seeds 3]

1. A 512x512x512 float32 matmul: untuned, tuned, numpy (GFLOPS).
2. Seed 004's MLP (784-128-10) and a 784-512-512-10 MLP at batch 1, 64 and 450,
   written with R.matmul/R.add/R.nn.relu (the build fuses each layer into one
   kernel; for tuning, the bound weights are transposed once at build time, so
   the tuned kernels read them along the output axis): untuned, tuned
   (``tune_relax``, then ``MetaScheduleApplyDatabase``),
   numpy, and onnxruntime and torch when installed, all in one run; with the
   wall time of tuning each model.
3. Search at equal trials on the matmul: evolutionary search guided by the
   cost model, and random search (``strategy="replay-trace"``): the best
   GFLOPS found after a quarter, half and all of the trials, the median over
   ``--search-seeds`` tuning runs of each (one run's best depends on its draws).

Each row's columns are measured together, in alternating rounds (benchmarks/timing.py),
so a change in the machine's load moves all of them. ``--trials`` is the budget per task
(at most 256 per the issue), measured ``PER_ITER`` candidates at a time (the first batch
is random, later ones are chosen by the cost model). Work
directories are fresh for each tuning (so tuning times are real) under
``--work-dir`` (default: a temporary directory).
"""
import argparse
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

import rvm
from rvm import meta_schedule as ms
from rvm import relax, te
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from timing import alternating_medians

TARGET = "llvm"
REPEAT = 15
PER_ITER = 16


def matmul_module(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return rvm.IRModule({"main": te.create_prim_func([A, B, C])})


def mlp_module(batch, sizes):
    """A Relax MLP: x (batch, sizes[0]) -> ... -> sizes[-1], relu between layers."""
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo((batch, sizes[0]), "float32"))
    params = []
    for k, (m, n) in enumerate(zip(sizes, sizes[1:])):
        params.append(Var(f"w{k}", TensorStructInfo((n, m), "float32")))
        params.append(Var(f"b{k}", TensorStructInfo((n,), "float32")))
    with bb.function("main", [x] + params):
        with bb.dataflow():
            h = x
            for k in range(len(sizes) - 1):
                w, b = params[2 * k], params[2 * k + 1]
                h = bb.emit(relax.op.add(relax.op.matmul(h, relax.op.permute_dims(w)), b))
                if k < len(sizes) - 2:
                    h = bb.emit(relax.op.nn.relu(h))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def mlp_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    params = {}
    for k, (m, n) in enumerate(zip(sizes, sizes[1:])):
        params[f"w{k}"] = (rng.standard_normal((n, m)) / np.sqrt(m)).astype("float32")
        params[f"b{k}"] = rng.standard_normal(n).astype("float32")
    return params


def numpy_mlp(params, x):
    n = len(params) // 2
    for k in range(n):
        x = x @ params[f"w{k}"].T + params[f"b{k}"]
        if k < n - 1:
            x = np.maximum(x, 0)
    return x


def onnx_session(params):
    try:
        import onnx
        import onnxruntime
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    n = len(params) // 2
    nodes, inits = [], []
    prev = "x"
    for k in range(n):
        inits += [numpy_helper.from_array(params[f"w{k}"], f"w{k}"),
                  numpy_helper.from_array(params[f"b{k}"], f"b{k}")]
        out = f"h{k}" if k < n - 1 else "y"
        gemm = f"g{k}" if k < n - 1 else "y"
        nodes.append(helper.make_node("Gemm", [prev, f"w{k}", f"b{k}"], [gemm], transB=1))
        if k < n - 1:
            nodes.append(helper.make_node("Relu", [gemm], [out]))
        prev = out
    m = params["w0"].shape[1]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, ["batch", m])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnxruntime.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])


def torch_mlp(params):
    try:
        import torch
    except ImportError:
        return None
    n = len(params) // 2
    layers = []
    for k in range(n):
        w = params[f"w{k}"]
        lin = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(params[f"b{k}"]))
        layers.append(lin)
        if k < n - 1:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).eval()

    def run(x):
        with torch.no_grad():
            return model(torch.from_numpy(x))

    return run


def tune_dir(root, name):
    path = f"{root}/{name}"
    shutil.rmtree(path, ignore_errors=True)
    return path


def bench_matmul(args, root):
    mod = matmul_module(512)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((512, 512)).astype("float32") for _ in range(2))
    an, bn, cn = rvm.nd.array(a), rvm.nd.array(b), rvm.nd.empty((512, 512))
    untuned = rvm.build(mod, target=TARGET)
    start = time.perf_counter()
    db = ms.tune_tir(mod, TARGET, tune_dir(root, "matmul"), args.trials, num_trials_per_iter=PER_ITER, progress=False,
                     seed=0)
    tuning = time.perf_counter() - start
    tuned = rvm.build(ms.tir_integration.compile_tir(db, mod, TARGET).mod, target=TARGET)
    tuned["main"](an, bn, cn)
    np.testing.assert_allclose(cn.numpy(), a @ b, rtol=1e-3, atol=1e-3)
    flops = 2 * 512 ** 3
    med = alternating_medians({"untuned": lambda: untuned["main"](an, bn, cn),
                               "tuned": lambda: tuned["main"](an, bn, cn),
                               "numpy": lambda: a @ b}, REPEAT)
    rows = [("untuned", med["untuned"]),
            (f"tuned ({args.trials} trials, {tuning:.0f} s)", med["tuned"]),
            ("numpy", med["numpy"])]
    print(f"\n1. matmul 512x512x512 float32")
    print(f"{'':34s}{'ms':>9s}{'GFLOPS':>9s}{'x numpy GFLOPS':>16s}")
    numpy_gflops = flops / rows[-1][1] / 1e9
    for name, t in rows:
        gflops = flops / t / 1e9
        print(f"{name:34s}{t * 1e3:9.3f}{gflops:9.1f}{gflops / numpy_gflops:16.2f}")


def bench_mlps(args, root):
    print(f"\n2. MLPs (median us per batch; x numpy = time / numpy's time)")
    header = f"{'model':22s}{'batch':>6s}{'untuned':>10s}{'tuned':>10s}{'numpy':>10s}" \
             f"{'onnxrt':>10s}{'torch':>10s}{'tuned x np':>12s}{'tuning s':>10s}"
    print(header)
    for label, sizes in (("MLP 784-128-10", (784, 128, 10)),
                         ("MLP 784-512-512-10", (784, 512, 512, 10))):
        params = mlp_params(sizes)
        session = onnx_session(params)
        torch_run = torch_mlp(params)
        for batch in (1, 64, 450):
            mod = mlp_module(batch, sizes)
            bound = relax.transform.BindParams("main", {k: rvm.nd.array(v)
                                                        for k, v in params.items()})(mod)
            x = np.random.default_rng(batch).standard_normal((batch, sizes[0])).astype("float32")
            xn = rvm.nd.array(x)
            expected = numpy_mlp(params, x)
            vm0 = relax.VirtualMachine(relax.build(bound, target=TARGET), rvm.cpu())
            work_dir = tune_dir(root, f"mlp{len(sizes)}_{batch}")
            tasks = ms.relax_integration.extract_tasks(bound, TARGET)
            start = time.perf_counter()
            ms.relax_integration.tune_relax(bound, {}, TARGET, work_dir,
                                            max_trials_global=args.trials * len(tasks),
                                            max_trials_per_task=args.trials,
                                            num_trials_per_iter=PER_ITER, seed=0, progress=False)
            tuning = time.perf_counter() - start
            tuned = relax.transform.MetaScheduleApplyDatabase(work_dir)(bound)
            vm1 = relax.VirtualMachine(relax.build(tuned, target=TARGET), rvm.cpu())
            for vm in (vm0, vm1):
                np.testing.assert_allclose(vm["main"](xn).numpy(), expected, rtol=1e-3,
                                           atol=1e-3)
            runs = {"untuned": lambda: vm0["main"](xn), "tuned": lambda: vm1["main"](xn),
                    "numpy": lambda: numpy_mlp(params, x)}
            if session:
                runs["onnxrt"] = lambda: session.run(None, {"x": x})
            if torch_run:
                runs["torch"] = lambda: torch_run(x)
            med = alternating_medians(runs, REPEAT)
            t_untuned, t_tuned, t_numpy = med["untuned"], med["tuned"], med["numpy"]
            t_ort, t_torch = med.get("onnxrt"), med.get("torch")
            peers = "".join(f"{t * 1e6:10.1f}" if t else f"{'-':>10s}" for t in (t_ort, t_torch))
            print(f"{label:22s}{batch:6d}{t_untuned * 1e6:10.1f}{t_tuned * 1e6:10.1f}"
                  f"{t_numpy * 1e6:10.1f}{peers}{t_tuned / t_numpy:12.2f}{tuning:10.0f}")
            sys.stdout.flush()


def bench_search(args, root):
    """Best GFLOPS after n trials, and what the cost model changes in what gets measured:
    the median GFLOPS of the candidates measured after the first batch (which is random
    for both), and the trials a run takes to reach 90% and 95% of the best GFLOPS any run
    found."""
    mod = matmul_module(512)
    flops = 2 * 512 ** 3
    trials = args.trials
    seeds = range(1, args.search_seeds + 1)
    marks = [trials // 4, trials // 2, trials]
    runs, seconds = {}, {}
    for label, strategy, cost_model in (
            ("evolutionary + cost model", "evolutionary", "gbt"),
            ("random (replay-trace)", "replay-trace", "random")):
        start = time.perf_counter()
        runs[label] = []
        for seed in seeds:
            db = ms.tune_tir(mod, TARGET, tune_dir(root, f"search_{strategy}_{seed}"), trials,
                             num_trials_per_iter=PER_ITER, strategy=strategy,
                             cost_model=cost_model, progress=False, seed=seed)
            runs[label].append([flops / r.best_run_sec / 1e9 if r.is_valid else 0.0
                                for r in db.get_all_tuning_records()[:trials]])
        seconds[label] = (time.perf_counter() - start) / len(seeds)
    top = max(max(g) for rs in runs.values() for g in rs)
    print(f"\n3. search at equal trials (matmul 512^3; median over {len(seeds)} seeds, "
          f"[lowest, highest])")
    print(f"{'strategy':28s}" + "".join(f"{f'best n={m}':>22s}" for m in marks)
          + f"{'later GFLOPS':>14s}{'to 90%':>8s}{'to 95%':>8s}{'time s':>8s}")
    for label, rs in runs.items():
        cells = ""
        for m in marks:
            best = [max(g[:m]) for g in rs]
            cells += f"{statistics.median(best):8.1f} [{min(best):5.1f},{max(best):6.1f}]"
        later = statistics.median(statistics.median(g[PER_ITER:]) for g in rs)
        reach_text = ""
        for frac in (0.9, 0.95):
            reached = statistics.median(
                next((i + 1 for i, v in enumerate(g) if v >= frac * top), trials + 1) for g in rs)
            reach_text += f"{reached:8.0f}" if reached <= trials else f"{'>' + str(trials):>8s}"
        print(f"{label:28s}{cells}{later:14.1f}{reach_text}{seconds[label]:8.0f}")
    print(f"later GFLOPS: the median candidate after the first batch of {PER_ITER}; to 90% (95%): "
          f"the median over runs of the trials until a run first reaches 90% (95%) of the best "
          f"found by any run, {top:.1f} GFLOPS")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=64, help="trials per task (<= 256)")
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--only", choices=["matmul", "mlp", "search"], default=None)
    parser.add_argument("--search-seeds", type=int, default=3,
                        help="tuning runs per strategy in the search comparison")
    args = parser.parse_args(argv)
    root = args.work_dir or tempfile.mkdtemp(prefix="rvm-bench-tuning-")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; {args.trials} trials per "
          f"task; target {TARGET!r}; median of {REPEAT} alternating rounds")
    if args.only in (None, "matmul"):
        bench_matmul(args, root)
    if args.only in (None, "mlp"):
        bench_mlps(args, root)
    if args.only in (None, "search") and not args.skip_search:
        bench_search(args, root)


if __name__ == "__main__":
    main()
