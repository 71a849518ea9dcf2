"""Three PyTorch models through rvm next to torch eager and onnxruntime, in one run, and
the MLP's int8 and fp16 ONNX variants against onnxruntime.

    python benchmarks/bench_models.py [--trials 0] [--batches 1 64]
                                      [--models mlp cnn encoder mlp-int8 mlp-fp16]
                                      [--sources rvm torch onnxruntime rvm-onnx ort-default rvm-default]
                                      [--repeat 15] [--threads 1] [--competitor]

The models are the ones the importer tests check (tests/relax/frontend/torch_models.py):
seed 004's MLP (784-128-10), a small CNN ((conv, batch norm, relu, max pool) x 2,
linear; 1x28x28) and a transformer encoder block (4-head attention over 7 tokens of
64, layer norms, GELU MLP, residuals). Each is imported with ``from_fx`` for a fixed
batch, built by ``relax.build`` (target "c", weights bound, fusion on) and run on the
native VM engine. ``rvm-onnx`` is the ONNX path: the model exported with
``torch.onnx.export`` (a symbolic batch) and imported with ``from_onnx``, built the same
way; ``ort-default`` is onnxruntime with its default thread count (``onnxruntime``,
torch and rvm's kernels use ``--threads``; rvm's through ``rvm.runtime.set_num_threads``).
``rvm-default`` is ``rvm``'s build without tuning records: with ``--trials`` it shows
what tuning adds in the same run.

``--competitor`` measures every row twice in the same run, quiet and with one
competing CPU-bound process running (benchmarks/competitor.py), every call timed on
its own: each source gets its quiet median, its loaded median, the loaded upper
quartile over the loaded median ("q3/med", a collapsing thread team shows here) and
its slowdown (loaded median / quiet median).

``<model>-int8`` and ``<model>-fp16`` rows run a variant of the exported model
(``onnx_variants``: quantized by onnxruntime's ``quantize_dynamic``, or float16 weights
and computation with float32 at the edges) in the ONNX columns only, every column on the
same variant of the fixed-batch export (``rvm-onnx`` too). Their results are checked
against onnxruntime on that variant (int8: within 1e-4, the integer products are exact;
fp16: within 2**-8 relative and absolute) and against torch (int8: within 10% of the
output's range; fp16: 1e-2).

``--trials N`` tunes every kernel of each (model, batch) first with
``rvm.meta_schedule`` (N trials per kernel on average: the model's budget is split by
each kernel's share of its time, measured on the default kernels, at most 4 N on one
kernel; one work_dir per model, so a kernel whose shapes do not depend on the batch is
tuned once; the records are applied with ``MetaScheduleApplyDatabase``); with 0 (the
default) the kernels have their default schedules. The header says which.

A column is a *row source*: a name and a function ``prepare(case) -> run`` where
``case`` carries the torch model, its name, the batch, an example input and the
options, and ``run(x)`` maps a float32 numpy batch to a numpy result (or
``prepare`` returns None when the source is unavailable). Every result is checked
against torch eager before timing. To add a source (another importer, say), write
its ``prepare`` and add it to ``SOURCES``. Medians are of ``--repeat`` rounds; in a
round every source runs in turn, so the columns of a row are measured together.
"""
import argparse
import functools
import io
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import rvm  # noqa: E402
from rvm import relax  # noqa: E402
from competitor import alternating_latencies, competing_process, quartiles  # noqa: E402
from onnx_variants import VARIANTS  # noqa: E402
from timing import alternating_samples  # noqa: E402

TARGET = "c"


class Case:
    """One row: ``name`` and ``model`` (torch, eval mode), ``batch``, ``x`` (an input),
    ``shape`` (one example's shape), ``variant`` (None, or a key of
    ``onnx_variants.VARIANTS``) and the command-line ``options``."""

    def __init__(self, name, model, shape, batch, options, variant=None):
        self.name, self.model, self.shape, self.batch = name, model, shape, batch
        self.options, self.variant = options, variant
        self.x = np.random.default_rng(batch).standard_normal((batch,) + shape).astype("float32")


# -- row sources ---------------------------------------------------------------------------
def prepare_torch(case):
    if case.variant:
        return None
    import torch

    torch.set_num_threads(case.options.threads)

    def run(x):
        with torch.no_grad():
            return case.model(torch.from_numpy(x)).numpy()

    return run


def _onnx_model(case, dynamic_batch=False):
    import torch

    buffer = io.BytesIO()
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic_batch else None
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, not gone
        warnings.simplefilter("ignore")
        torch.onnx.export(case.model, (torch.from_numpy(case.x),), buffer, input_names=["x"],
                          output_names=["y"], dynamo=False, dynamic_axes=axes)
    if case.variant:
        return VARIANTS[case.variant](buffer.getvalue())
    return buffer.getvalue()


def _onnxruntime(case, threads):
    try:
        import onnxruntime
    except ImportError:
        return None
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(_onnx_model(case), options,
                                           providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {"x": x})[0]


def prepare_onnxruntime(case):
    return _onnxruntime(case, case.options.threads)


def prepare_onnxruntime_default(case):
    """onnxruntime with its default thread count (one per core)."""
    return _onnxruntime(case, 0)


def prepare_rvm_onnx(case):
    """The ONNX path: the model exported with a symbolic batch, ``from_onnx``, built as
    ``rvm``'s column is."""
    try:
        import onnx
    except ImportError:
        return None
    from rvm.relax.frontend.onnx import from_onnx

    # a variant runs the very model onnxruntime runs (fixed batch)
    mod = from_onnx(onnx.load_from_string(_onnx_model(case, dynamic_batch=not case.variant)))
    vm = relax.VirtualMachine(relax.build(mod, target=TARGET), rvm.cpu())
    main = vm["main"]
    return lambda x: main(x).numpy()


@functools.lru_cache(maxsize=None)
def _tuning_dir(name):
    """One work_dir per model, shared by its batch sizes: a kernel whose shapes do not
    depend on the batch is tuned once."""
    return tempfile.mkdtemp(prefix=f"rvm-bench-models-{name}-")


def _tune(mod, case):
    from rvm import meta_schedule as ms

    trials = case.options.trials
    work_dir = _tuning_dir(case.name)
    tasks = ms.relax_integration.extract_tasks(mod, TARGET)
    recorded = len(ms.database.JSONDatabase(work_dir=work_dir))
    start = time.perf_counter()
    # trials * tasks in all, split by each kernel's share of the model's time (its
    # default kernel measured first), at most four times the average on one kernel; a
    # kernel whose best stops improving stops early, so fewer may be measured
    database = ms.relax_integration.tune_relax(mod, {}, TARGET, work_dir,
                                               max_trials_global=trials * len(tasks),
                                               max_trials_per_task=4 * trials,
                                               num_trials_per_iter=16, seed=0, progress=False)
    case.notes.append(f"{case.name} batch {case.batch}: {len(tasks)} kernels tuned in "
                      f"{time.perf_counter() - start:.0f} s ({len(database) - recorded} "
                      f"candidates measured of a budget of {trials * len(tasks)})")
    return relax.transform.MetaScheduleApplyDatabase(work_dir)(mod)


def prepare_rvm(case, tuned=True):
    if case.variant:
        return None
    import torch

    from rvm.relax.frontend.torch import from_fx

    mod = from_fx(torch.fx.symbolic_trace(case.model), [((case.batch,) + case.shape, "float32")])
    if tuned and case.options.trials:
        mod = _tune(mod, case)
    vm = relax.VirtualMachine(relax.build(mod, target=TARGET), rvm.cpu())
    main = vm["main"]
    return lambda x: main(x).numpy()


def prepare_rvm_default(case):
    """``rvm``'s build without tuning records, whatever ``--trials`` says: next to a
    tuned ``rvm`` column it shows what tuning adds in the same run."""
    return prepare_rvm(case, tuned=False)


# name -> prepare(case); a column of the table each, in this order.
SOURCES = {"rvm": prepare_rvm, "torch": prepare_torch, "onnxruntime": prepare_onnxruntime,
           "rvm-onnx": prepare_rvm_onnx, "ort-default": prepare_onnxruntime_default,
           "rvm-default": prepare_rvm_default}
# (numerator, denominator) columns of the ratio part of the table
RATIOS = [("rvm", "torch"), ("rvm", "onnxruntime"), ("rvm-onnx", "onnxruntime"),
          ("rvm-onnx", "ort-default"), ("rvm", "rvm-default")]


def check(runs, case, expected):
    """Every source's result against torch (a variant's: against onnxruntime on it)."""
    where = f"{case.name} batch {case.batch}"
    results = {source: run(case.x) for source, run in runs.items()}
    if not case.variant:
        for source, got in results.items():
            np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4,
                                       err_msg=f"{source} on {where}")
        return
    close = {"int8": dict(rtol=1e-4, atol=1e-4), "fp16": dict(rtol=2 ** -8, atol=2 ** -8)}
    loose = {"int8": dict(rtol=0, atol=0.1 * np.ptp(expected)), "fp16": dict(rtol=1e-2,
                                                                          atol=1e-2)}
    reference = results.get("onnxruntime", results.get("ort-default"))
    for source, got in results.items():
        if reference is not None:
            np.testing.assert_allclose(got, reference, **close[case.variant],
                                       err_msg=f"{source} on {where}")
        np.testing.assert_allclose(got, expected, **loose[case.variant],
                                   err_msg=f"{source} against torch on {where}")


def _print_loaded_row(name, batch, sources, calls, repeat):
    """One row of the --competitor table (see the module docstring)."""
    quiet = alternating_latencies(calls, repeat)
    with competing_process():
        loaded = alternating_latencies(calls, repeat)
    cells = []
    for source in sources:
        if source not in calls:
            cells.append(f"{'-':>36s}")
            continue
        quiet_median = quartiles(quiet[source])[0]
        median, upper = quartiles(loaded[source])
        cells.append(f"{quiet_median * 1e6:10.1f}{median * 1e6:10.1f}{upper / median:8.2f}"
                     f"{median / quiet_median:8.2f}")
    print(f"{name:10s}{batch:6d}" + "".join(cells))
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=0, help="tuning trials per kernel")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--models", nargs="+",
                        default=["mlp", "cnn", "encoder", "mlp-int8", "mlp-fp16"])
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for torch, onnxruntime and rvm's kernels")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--competitor", action="store_true",
                        help="measure each row quiet and with one competing CPU-bound process")
    options = parser.parse_args(argv)
    rvm.runtime.set_num_threads(options.threads)

    import torch

    from tests.relax.frontend.torch_models import MODELS, seeded

    kernels = f"tuned ({options.trials} trials per kernel)" if options.trials else "untuned"
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}; rvm target {TARGET!r}, "
          f"{kernels}; {options.threads} thread(s) for torch and onnxruntime; "
          f"median [range] of {options.repeat} alternating rounds (us per call)")
    sources = options.sources
    ratios = [(a, b) for a, b in RATIOS if a in sources and b in sources]
    if options.competitor:
        print("per source: quiet median, loaded median (us), loaded q3/median, slowdown "
              "(loaded / quiet median)")
        print(f"{'model':10s}{'batch':>6s}" + "".join(f"{s:>36s}" for s in sources))
    else:
        print(f"{'model':10s}{'batch':>6s}" + "".join(f"{s:>24s}" for s in sources)
              + "".join(f"{a + ' / ' + b:>26s}" for a, b in ratios))
    notes = []
    for name in options.models:
        base, _, variant = name.partition("-")
        model_class, shape = MODELS[base]
        for batch in options.batches:
            case = Case(name, seeded(model_class), shape, batch, options, variant or None)
            case.notes = notes
            expected = prepare_torch(Case(base, case.model, shape, batch, options))(case.x)
            runs = {}
            for source in sources:
                run = SOURCES[source](case)
                if run is None:
                    if not variant or source not in ("rvm", "torch"):  # float32 only
                        notes.append(f"{source}: not installed")
                    continue
                runs[source] = run
            check(runs, case, expected)
            calls = {s: functools.partial(run, case.x) for s, run in runs.items()}
            if options.competitor:
                _print_loaded_row(name, batch, sources, calls, options.repeat)
                continue
            samples = alternating_samples(calls, options.repeat)
            med = {s: statistics.median(t) for s, t in samples.items()}
            cells = "".join(f"{_median_range(samples[s]):>24s}" if s in med else f"{'-':>24s}"
                            for s in sources)
            shares = "".join(f"{med[a] / med[b]:26.2f}" if a in med and b in med
                             else f"{'-':>26s}" for a, b in ratios)
            print(f"{name:10s}{batch:6d}{cells}{shares}")
            sys.stdout.flush()
    for note in notes:
        print(note)


def _median_range(samples):
    """"median [min-max]" of per-call seconds, in microseconds."""
    return (f"{statistics.median(samples) * 1e6:.1f} "
            f"[{min(samples) * 1e6:.1f}-{max(samples) * 1e6:.1f}]")


if __name__ == "__main__":
    main()
