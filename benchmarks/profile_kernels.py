"""Where a default build spends its time: each kernel's share of a model's call and the
default schedule rule it got.

    python benchmarks/profile_kernels.py [--models cnn encoder resnet bert gpt2]
                                         [--batch 8] [--path torch|onnx] [--threads 2]
                                         [--runs 5] [--top 12] [--no-default-schedule]
                                         [--database WORK_DIR [--rounds 5]]

``cnn`` and ``encoder`` are the models of benchmarks/bench_models.py (``from_fx`` for a
fixed batch), the others the Hugging Face models of benchmarks/bench_hf_models.py
(``--path torch``: ``from_exported_program``; ``--path onnx``: ``torch.onnx.export`` then
``from_onnx``; a symbolic batch and sequence, run at ``--batch`` and ``--length``). Each is
lowered by the default pipeline (``rvm.driver.relax_build.lower``), which names the rule
``DefaultCPUSchedule`` gave every kernel (its ``tir.is_scheduled`` attribute; "-" for none),
built, and run ``--runs`` times under ``VirtualMachine.profile`` after a warm-up call.
A row is one callee (a kernel called through ``vm.builtin.call_tir_dyn`` as itself):
calls per run, the median over runs of its total time, its share of the median run and
its rule, with the shapes of its buffers (``?`` a symbolic axis).

``--database WORK_DIR`` (a tuning work_dir, benchmarks/bench_models.py's say) compares
instead each kernel of the default build with the same kernel of the tuned build (the
database's records applied by ``MetaScheduleApplyDatabase``), in CPU time of the calling
thread on one thread, so other processes of a shared machine stay out of the figures:
every kernel of both builds is compiled on its own and called on random arguments of its
shapes, in ``--rounds`` alternating rounds (each the fastest of three bursts of 20 ms),
and a row gives the medians over rounds of us per call of each build, their ratio (tuned
/ default, the per-round ratios' median), the calls per model run, and the rule of the
default kernel ("=" marks a tuned kernel equal to it: the default won its task). The last
row sums both builds' kernels weighted by their calls. Kernels with symbolic shapes are
skipped.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import rvm  # noqa: E402
from rvm import relax  # noqa: E402
from rvm.bytecode.contract import ArgKind  # noqa: E402
from rvm.driver.relax_build import lower  # noqa: E402
from rvm.target.target import Target  # noqa: E402
from rvm.tir.function import PrimFunc  # noqa: E402

TORCH_MODELS = ("mlp", "cnn", "encoder")


def torch_module(name, batch):
    """(IRModule, input) of a bench_models.py model imported with ``from_fx``."""
    import torch

    from rvm.relax.frontend.torch import from_fx
    from tests.relax.frontend.torch_models import MODELS, seeded

    model_class, shape = MODELS[name]
    model = seeded(model_class)
    mod = from_fx(torch.fx.symbolic_trace(model), [((batch,) + shape, "float32")])
    x = np.random.default_rng(batch).standard_normal((batch,) + shape).astype("float32")
    return mod, x


def hf_module(name, batch, path, length, image):
    """(IRModule, input) of a bench_hf_models.py model through ``path``."""
    from tests.relax.frontend import hf_models

    _, kind, size = hf_models.MODELS[name]
    size = image if kind == "image" else size
    model = hf_models.make(name, image_size=size)
    if path == "onnx":
        import onnx

        from rvm.relax.frontend.onnx import from_onnx

        mod = from_onnx(onnx.load_from_string(hf_models.export_onnx(model, kind, size)))
    else:
        from rvm.relax.frontend.torch import from_exported_program

        mod = from_exported_program(hf_models.export_program(model, kind, size))
    return mod, hf_models.inputs(kind, size, batch, length, seed=batch)


def _dims(func):
    shapes = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is not None:
            shapes.append("x".join(str(d.value) if hasattr(d, "value") else "?"
                                   for d in buffer.shape))
    return " ".join(shapes)


def _callee(ex, pc):
    """The function the CALL at ``pc`` runs: its callee, or for ``vm.builtin.call_tir_dyn``
    the kernel passed as its first argument."""
    instruction = ex.instructions[pc]
    name = ex.func_table[instruction.field("func")].name
    args = instruction.field("args")
    if name == "vm.builtin.call_tir_dyn" and args and args[0].kind == ArgKind.FUNC:
        return ex.func_table[args[0].value].name
    return name


def profile(mod, x, runs, default_schedule=True):
    """(rows, median total seconds): rows ``(callee, rule, calls, seconds, shapes)``."""
    target = Target("c")
    with target:
        lowered = lower(mod, default_schedule=default_schedule)
    kernels = {gv.name_hint: f for gv, f in lowered.functions.items() if isinstance(f, PrimFunc)}
    vm = relax.VirtualMachine(relax.build(lowered, target=target, pipeline=None), rvm.cpu())
    vm["main"](x)
    starts = {info.name: info.start for info in vm.executable.func_table}
    totals, per_callee = [], {}
    for _ in range(runs):
        report = vm.profile("main", x)
        totals.append(report.total)
        seen = {}
        for row in report.rows:
            callee = _callee(vm.executable, starts[row["function"]] + row["position"])
            calls, seconds = seen.get(callee, (0, 0.0))
            seen[callee] = (calls + row["calls"], seconds + row["total"])
        for callee, value in seen.items():
            per_callee.setdefault(callee, []).append(value)
    rows = []
    for callee, values in per_callee.items():
        func = kernels.get(callee)
        rule = (func.get_attr("tir.is_scheduled") or "-") if func is not None else "(builtin)"
        rows.append((callee, rule, values[0][0], statistics.median(v[1] for v in values),
                     _dims(func) if func is not None else ""))
    rows.sort(key=lambda r: -r[3])
    return rows, statistics.median(totals)


def _lowered_kernels(mod, database=None):
    """{name: PrimFunc} of ``mod`` lowered by the default pipeline for target "c", with the
    records of the tuning work_dir ``database`` applied first when given."""
    target = Target("c")
    if database is not None:
        mod = relax.transform.MetaScheduleApplyDatabase(database)(mod)
    with target:
        lowered = lower(mod)
    return lowered, {gv.name_hint: f for gv, f in lowered.functions.items()
                     if isinstance(f, PrimFunc)}


def _kernel_calls(lowered, x, kernels):
    """[(kernel name, calls per run of "main")] of the kernels among ``kernels`` that
    "main" calls, in the order of their first call."""
    vm = relax.VirtualMachine(relax.build(lowered, target=Target("c"), pipeline=None),
                              rvm.cpu())
    vm["main"](x)
    starts = {info.name: info.start for info in vm.executable.func_table}
    rows = sorted(vm.profile("main", x).rows,
                  key=lambda r: (starts[r["function"]], r["position"]))
    calls = {}
    for row in rows:
        callee = _callee(vm.executable, starts[row["function"]] + row["position"])
        if callee in kernels:
            calls[callee] = calls.get(callee, 0) + row["calls"]
    return list(calls.items())


def _cpu_us(fn, bursts=3, seconds=0.02):
    """CPU us of this thread per call of ``fn()``: the fastest of ``bursts`` bursts."""
    fn()
    best = float("inf")
    for _ in range(bursts):
        number, start = 0, time.thread_time()
        while time.thread_time() - start < seconds:
            fn()
            number += 1
        best = min(best, (time.thread_time() - start) / number * 1e6)
    return best


def _callable(library, name, func):
    """A call of kernel ``name`` of ``library`` on random arguments of ``func``'s shapes,
    or None for symbolic shapes."""
    from rvm.meta_schedule.arg_info import ArgInfo
    from rvm.meta_schedule.runner.evaluate import random_arguments

    try:
        infos = ArgInfo.from_prim_func(func)
    except ValueError:
        return None
    args = [rvm.nd.array(a) for a in random_arguments(infos, seed=0)]
    kernel = library[name]
    return lambda: kernel(*args)


def compare(mod, x, database, rounds):
    """Rows ``(kernel, rule, calls, default us, tuned us, ratio)`` of the default and the
    tuned build's kernels (module docstring), slowest default first."""
    from rvm.driver.build_module import build_kernels
    from rvm.ir.base import structural_equal

    lowered, defaults = _lowered_kernels(mod)
    tuned_lowered, tuned = _lowered_kernels(mod, database)
    # The two builds may name a kernel differently (the tuned one keeps a transposed weight
    # for FoldConstant: matmul, not NT_matmul): kernels pair by the order of their calls.
    order = _kernel_calls(lowered, x, defaults)
    tuned_order = _kernel_calls(tuned_lowered, x, tuned)
    if [c for _, c in order] != [c for _, c in tuned_order]:
        raise SystemExit(f"the builds call different kernels: {order} against {tuned_order}")
    libraries = (build_kernels(lowered), build_kernels(tuned_lowered))
    runs = {}
    for (name, calls), (tuned_name, _) in zip(order, tuned_order):
        pair = (_callable(libraries[0], name, defaults[name]),
                _callable(libraries[1], tuned_name, tuned[tuned_name]))
        if None not in pair:
            runs[(name, tuned_name, calls)] = pair
    samples = {key: ([], []) for key in runs}
    for _ in range(rounds):
        for key, pair in runs.items():
            for k, fn in enumerate(pair):
                samples[key][k].append(_cpu_us(fn))
    rows = []
    for (name, tuned_name, calls), (default_us, tuned_us) in samples.items():
        rule = defaults[name].get_attr("tir.is_scheduled") or "-"
        if structural_equal(defaults[name].body, tuned[tuned_name].body, map_free_vars=True):
            rule += " ="
        ratio = statistics.median(t / d for t, d in zip(tuned_us, default_us))
        rows.append((tuned_name, rule, calls, statistics.median(default_us),
                     statistics.median(tuned_us), ratio))
    rows.sort(key=lambda r: -r[2] * r[3])
    return rows


def print_comparison(label, rows, top):
    print(f"\n{label}: kernels of the default and the tuned build, us of thread CPU time per "
          f"call, one thread")
    print(f"{'kernel':40s}{'rule':>11s}{'calls':>6s}{'default':>10s}{'tuned':>10s}"
          f"{'tuned/def':>10s}")
    for name, rule, calls, default_us, tuned_us, ratio in rows[:top]:
        print(f"{name[:40]:40s}{rule:>11s}{calls:6d}{default_us:10.2f}{tuned_us:10.2f}"
              f"{ratio:10.2f}")
    default_total = sum(r[2] * r[3] for r in rows)
    tuned_total = sum(r[2] * r[4] for r in rows)
    print(f"{'(all kernels, weighted by calls)':40s}{'':>11s}{'':>6s}{default_total:10.2f}"
          f"{tuned_total:10.2f}{tuned_total / default_total:10.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["cnn", "encoder", "resnet", "bert",
                                                        "gpt2"])
    parser.add_argument("--batch", type=int, default=None,
                        help="batch (default: 64 for mlp/cnn/encoder, 8 for the others)")
    parser.add_argument("--path", choices=("torch", "onnx"), default="torch")
    parser.add_argument("--length", type=int, default=64, help="tokens per sequence")
    parser.add_argument("--image", type=int, default=64, help="image height and width")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--no-default-schedule", action="store_true")
    parser.add_argument("--database", default=None,
                        help="a tuning work_dir: compare the default and the tuned kernels")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    rvm.runtime.set_num_threads(1 if options.database else options.threads)
    for name in options.models:
        if name in TORCH_MODELS:
            batch = options.batch or 64
            mod, x = torch_module(name, batch)
            label = f"{name} batch {batch} (from_fx)"
        else:
            batch = options.batch or 8
            mod, x = hf_module(name, batch, options.path, options.length, options.image)
            label = f"{name} batch {batch} ({options.path} path)"
        if options.database:
            print_comparison(label, compare(mod, x, options.database, options.rounds),
                             options.top)
            sys.stdout.flush()
            continue
        rows, total = profile(mod, x, options.runs, not options.no_default_schedule)
        print(f"\n{label}: median {total * 1e3:.2f} ms per call over {options.runs} runs, "
              f"{options.threads} thread(s)")
        print(f"{'callee':34s}{'rule':>9s}{'calls':>6s}{'ms':>9s}{'share':>7s}  shapes")
        for callee, rule, calls, seconds, dims in rows[:options.top]:
            print(f"{callee[:34]:34s}{rule:>9s}{calls:6d}{seconds * 1e3:9.3f}"
                  f"{seconds / total:7.1%}  {dims[:60]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
