"""Six Hugging Face transformers models through rvm next to torch eager and onnxruntime.

    python benchmarks/bench_hf_models.py [--models gpt2 bert vit t5 resnet llama]
                                         [--batches 1 8] [--length 64] [--image 64]
                                         [--threads 2] [--repeat 7] [--trials 0]
                                         [--kernels]

The models are the ones the importer tests check (tests/relax/frontend/hf_models.py:
GPT-2, BERT, ViT, the T5 encoder, ResNet and Llama, 2 layers, hidden 128, seeded random
weights), run on token ids of ``--length`` tokens or ``--image`` x ``--image`` images
at each batch of ``--batches``. Columns:

- ``rvm``: the model exported by ``torch.export`` with a symbolic batch and sequence
  length, imported by ``from_exported_program`` and built once by ``relax.build`` with
  its defaults (target "c", rule-based schedules, fusion), run on the native VM engine;
- ``rvm-onnx``: the model exported by ``torch.onnx.export`` (TorchScript exporter,
  symbolic axes), imported by ``from_onnx``, built the same way;
- ``torch``: torch eager under ``torch.inference_mode``;
- ``onnxruntime``: the same ONNX file in an onnxruntime session.

Every source uses ``--threads`` threads: ``torch.set_num_threads``, onnxruntime's
``intra_op_num_threads``, and threadpoolctl's limit on the OpenMP runtimes the kernels
run on (applied after every library is loaded). Each rvm result is checked against
torch eager, and rvm-onnx's against onnxruntime, before timing. The sources of a row
are timed in ``--repeat`` alternating rounds (benchmarks/timing.py); the table gives
the median and the range (lowest-highest) per call. A second table gives, per model,
the export, import and build times of both rvm paths (one build serves every batch;
the kernel cache starts empty, so a build compiles its kernels).

``--trials N`` tunes the ``rvm`` column with ``rvm.meta_schedule`` first. Tuning
measures kernels on concrete inputs and ``tune_relax`` leaves out kernels with symbolic
shapes, so, as a TVM user does, each row's module is specialized to the row's batch and
sequence length (``relax.transform.BindSymbolicVars`` on the imported module, whose
weights are constants already) and tuned at those shapes: N trials per kernel on
average, split by each kernel's share of the model's time (measured on the default
kernels), at most 4 N on one kernel, one work_dir per model so a kernel whose shapes do
not depend on the batch is tuned once. The records are applied with
``MetaScheduleApplyDatabase`` and the specialized module built; ``rvm-default`` is then
the untuned build of the symbolic module (what ``rvm`` is without ``--trials``), so
``rvm / rvm-default`` shows what tuning adds. The tuning wall time, kernel count and
candidates measured are printed per row. ``--kernels`` also prints, per tuned kernel,
its default schedule's time against its best record's, both in thread CPU time on one
thread (robust to a loaded machine), and the ratio.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
# an empty kernel cache, so that a build time includes compiling its kernels
CACHE = tempfile.mkdtemp(prefix="rvm-bench-hf-")
os.environ["RVM_CACHE_DIR"] = CACHE

import rvm  # noqa: E402
from rvm import relax  # noqa: E402
from rvm.tir.expr import Var as TirVar  # noqa: E402
from timing import alternating_samples  # noqa: E402
from tests.relax.frontend import hf_models  # noqa: E402

SOURCES = ("rvm", "rvm-onnx", "torch", "onnxruntime")
TARGET = "c"


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def build_rvm(model, kind, size):
    """(main, {stage: seconds}) of the torch.export path."""
    from rvm.relax.frontend.torch import from_exported_program

    program, export = _timed(lambda: hf_models.export_program(model, kind, size))
    mod, imported = _timed(lambda: from_exported_program(program))
    vm, built = _timed(lambda: relax.VirtualMachine(relax.build(mod), rvm.cpu()))
    main = vm["main"]
    return mod, (lambda x: main(x)[0]), {"export": export, "import": imported, "build": built}


def specialize(mod, kind, batch, length):
    """``mod`` with its input's symbolic batch (and sequence length, for token ids) bound
    to ``batch`` (and ``length``)."""
    dims = [d for d in mod["main"].params[0].struct_info_.shape_values
            if isinstance(d, TirVar)]
    values = [batch, length] if kind == "ids" else [batch]
    if len(dims) != len(values):
        raise ValueError(f"expected {len(values)} symbolic input dimension(s), found {dims}")
    return relax.transform.BindSymbolicVars(dict(zip(dims, values)))(mod)


def tune_rvm(mod, name, kind, batch, options, work_dir):
    """(run(x) of the module specialized to the row and tuned, {"s", "tasks", "measured"},
    the tasks)."""
    from rvm import meta_schedule as ms

    mod = specialize(mod, kind, batch, options.length)
    tasks = ms.relax_integration.extract_tasks(mod, TARGET)
    recorded = len(ms.database.JSONDatabase(work_dir=work_dir))
    start = time.perf_counter()
    database = ms.relax_integration.tune_relax(
        mod, {}, TARGET, work_dir, max_trials_global=options.trials * len(tasks),
        max_trials_per_task=4 * options.trials, num_trials_per_iter=16, seed=0, progress=False)
    tuning = {"s": time.perf_counter() - start, "tasks": len(tasks),
              "measured": len(database) - recorded}
    tuned = relax.transform.MetaScheduleApplyDatabase(work_dir)(mod)
    vm = relax.VirtualMachine(relax.build(tuned, target=TARGET), rvm.cpu())
    main = vm["main"]
    return (lambda x: main(x)[0]), tuning, (tasks, database)


def build_onnx(model, kind, size, threads):
    """(rvm main, onnxruntime run, {stage: seconds}) of the ONNX path."""
    import onnx
    import onnxruntime

    from rvm.relax.frontend.onnx import from_onnx

    data, export = _timed(lambda: hf_models.export_onnx(model, kind, size))
    proto = onnx.load_from_string(data)
    mod, imported = _timed(lambda: from_onnx(proto))
    vm, built = _timed(lambda: relax.VirtualMachine(relax.build(mod), rvm.cpu()))
    main = vm["main"]
    several = len(proto.graph.output) > 1  # a tuple, else the one tensor
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    name = hf_models.input_name(kind)
    return ((lambda x: main(x)[0]) if several else main,
            lambda x: session.run(None, {name: x})[0],
            {"export": export, "import": imported, "build": built})


def _cpu_time_per_call(kernel, args, min_cpu=0.05):
    """Thread CPU seconds per call of ``kernel(*args)`` (rvm's kernels on one thread)."""
    kernel(*args)
    number = 1
    while True:
        start = time.thread_time()
        for _ in range(number):
            kernel(*args)
        spent = time.thread_time() - start
        if spent >= min_cpu or number >= 1 << 16:
            return spent / number
        number *= 2


def kernel_report(tasks, database):
    """Lines, per task: its default schedule's and its best record's time (thread CPU,
    one thread; each packed weight packed once, as the build runs it) and their ratio."""
    from rvm.meta_schedule.arg_info import ArgInfo
    from rvm.meta_schedule.builder import LocalBuilder
    from rvm.meta_schedule.builder.builder import BuilderInput
    from rvm.meta_schedule.default_schedule import default_schedule
    from rvm.meta_schedule.runner.evaluate import load_kernel, pack_inputs, random_arguments
    from rvm.runtime.ndarray import array

    builder = LocalBuilder(max_workers=1)
    lines = []
    previous = rvm.runtime.num_threads()
    rvm.runtime.set_num_threads(1)
    try:
        for task in tasks:
            schedules = [default_schedule(task.mod, TARGET, task.layout_free),
                         database.query_schedule(task.mod, TARGET)]
            infos = ArgInfo.from_entry_func(task.mod)
            times = []
            for sch in schedules:
                if sch is None:
                    times.append(None)
                    continue
                built = builder.build([BuilderInput(sch.mod, TARGET,
                                                    layout_free=task.layout_free)])[0]
                if built.error_msg is not None:
                    times.append(None)
                    continue
                kernel = load_kernel(built.artifact_path, built.functions, "main")
                spec = {"seed": 0, "args_info": [i.as_json() for i in infos],
                        "preprocs": built.preprocs}
                inputs = random_arguments(infos, 0)
                args = [array(a) for a in pack_inputs(spec, inputs)]
                times.append(_cpu_time_per_call(kernel, args))
            default, best = times
            cells = "".join("         -" if t is None else f"{t * 1e6:10.1f}" for t in times)
            ratio = f"{best / default:7.2f}" if default and best else "      -"
            lines.append(f"  {task.task_name[:44]:44s} x{task.weight:<3d}{cells}{ratio}")
    finally:
        rvm.runtime.set_num_threads(previous)
        builder.close()
    return lines


def prepare(name, options):
    """{source: run(x) -> first output} and the build times of one model."""
    import torch

    _, kind, size = hf_models.MODELS[name]
    size = options.image if kind == "image" else size
    model = hf_models.make(name, image_size=size)

    def run_torch(x):
        with torch.inference_mode():
            return model(torch.from_numpy(x))[0]

    mod, rvm_main, rvm_times = build_rvm(model, kind, size)
    onnx_main, ort_run, onnx_times = build_onnx(model, kind, size, options.threads)
    runs = {"rvm": rvm_main, "rvm-onnx": onnx_main, "torch": run_torch, "onnxruntime": ort_run}
    return mod, kind, size, runs, {"rvm": rvm_times, "rvm-onnx": onnx_times}


def _array(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def check(runs, x, label):
    """rvm against torch eager, rvm-onnx against onnxruntime (1e-3 relative)."""
    outputs = {s: _array(r(x)) for s, r in runs.items()}
    for ours, theirs in (("rvm", "torch"), ("rvm-default", "torch"),
                         ("rvm-onnx", "onnxruntime")):
        if ours not in outputs:
            continue
        want = outputs[theirs]
        np.testing.assert_allclose(outputs[ours], want, rtol=1e-3,
                                   atol=1e-3 * np.abs(want).max(),
                                   err_msg=f"{ours} against {theirs} on {label}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(hf_models.MODELS),
                        choices=list(hf_models.MODELS))
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--length", type=int, default=64, help="tokens per sequence")
    parser.add_argument("--image", type=int, default=64, help="image height and width")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7, help="alternating rounds (>= 5)")
    parser.add_argument("--trials", type=int, default=0,
                        help="tuning trials per kernel (0: no tuning)")
    parser.add_argument("--kernels", action="store_true",
                        help="with --trials: each tuned kernel's default and best, CPU time")
    options = parser.parse_args(argv)

    import onnxruntime
    import torch
    import transformers
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(options.threads)
    kernels = f"tuned ({options.trials} trials per kernel)" if options.trials else \
        "relax.build defaults"
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, transformers "
          f"{transformers.__version__}, onnxruntime {onnxruntime.__version__}; rvm "
          f"{kernels} (target {TARGET!r}); {options.threads} thread(s) each; "
          f"sequence {options.length}, image {options.image}x{options.image}; "
          f"median [range] of {options.repeat} alternating rounds, ms per call")
    sources = SOURCES + ("rvm-default",) if options.trials else SOURCES
    ratios = [("rvm", "torch"), ("rvm", "onnxruntime"), ("rvm-onnx", "onnxruntime")]
    ratios += [("rvm-default", "onnxruntime"), ("rvm", "rvm-default")] if options.trials else []
    print(f"{'model':8s}{'batch':>6s}" + "".join(f"{s:>25s}" for s in sources)
          + "".join(f"{_short(a) + ' / ' + _short(b):>16s}" for a, b in ratios))
    builds, tunings, reports = {}, [], []
    for name in options.models:
        mod, kind, size, runs, builds[name] = prepare(name, options)
        work_dir = tempfile.mkdtemp(prefix=f"rvm-bench-hf-{name}-", dir=CACHE)
        for batch in options.batches:
            x = hf_models.inputs(kind, size, batch, options.length, seed=batch)
            row = dict(runs)
            if options.trials:
                row["rvm-default"] = runs["rvm"]
                row["rvm"], tuning, tuned = tune_rvm(mod, name, kind, batch, options, work_dir)
                tunings.append((name, batch, tuning))
                if options.kernels:
                    reports.append((name, batch, kernel_report(*tuned)))
            check(row, x, f"{name} batch {batch}")
            with threadpool_limits(limits=options.threads):
                samples = alternating_samples({s: (lambda r=r: r(x)) for s, r in row.items()},
                                              options.repeat)
            med = {s: statistics.median(v) for s, v in samples.items()}
            cells = "".join(f"{med[s] * 1e3:9.3f} [{min(samples[s]) * 1e3:.3f}-"
                            f"{max(samples[s]) * 1e3:.3f}]".rjust(25) for s in sources)
            print(f"{name:8s}{batch:6d}{cells}"
                  + "".join(f"{med[a] / med[b]:16.2f}" for a, b in ratios))
            sys.stdout.flush()
    print("\nexport, import and build (s; one build serves every batch)")
    print(f"{'model':8s}" + "".join(f"{p + ' ' + stage:>18s}" for p in ("rvm", "rvm-onnx")
                                   for stage in ("export", "import", "build")))
    for name, times in builds.items():
        print(f"{name:8s}" + "".join(f"{times[p][stage]:18.2f}" for p in ("rvm", "rvm-onnx")
                                     for stage in ("export", "import", "build")))
    if tunings:
        print("\ntuning (wall s; kernels; candidates measured; candidates per s)")
        for name, batch, t in tunings:
            rate = t["measured"] / t["s"] if t["s"] else 0.0
            print(f"{name:8s}{batch:6d}{t['s']:10.1f}{t['tasks']:6d}{t['measured']:8d}"
                  f"{rate:8.2f}")
    for name, batch, lines in reports:
        print(f"\n{name} batch {batch}: per kernel, default schedule and best record "
              f"(us of thread CPU time on one thread), best / default")
        for line in lines:
            print(line)


def _short(source):
    return {"onnxruntime": "ort", "rvm-default": "rvm-def"}.get(source, source)


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
