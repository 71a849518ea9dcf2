"""Six Hugging Face transformers models through rvm next to torch eager and onnxruntime.

    python benchmarks/bench_hf_models.py [--models gpt2 bert vit t5 resnet llama]
                                         [--batches 1 8] [--length 64] [--image 64]
                                         [--threads 2] [--repeat 7]

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
from timing import alternating_samples  # noqa: E402
from tests.relax.frontend import hf_models  # noqa: E402

SOURCES = ("rvm", "rvm-onnx", "torch", "onnxruntime")


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
    return (lambda x: main(x)[0]), {"export": export, "import": imported, "build": built}


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


def prepare(name, options):
    """{source: run(x) -> first output} and the build times of one model."""
    import torch

    _, kind, size = hf_models.MODELS[name]
    size = options.image if kind == "image" else size
    model = hf_models.make(name, image_size=size)

    def run_torch(x):
        with torch.inference_mode():
            return model(torch.from_numpy(x))[0]

    rvm_main, rvm_times = build_rvm(model, kind, size)
    onnx_main, ort_run, onnx_times = build_onnx(model, kind, size, options.threads)
    runs = {"rvm": rvm_main, "rvm-onnx": onnx_main, "torch": run_torch, "onnxruntime": ort_run}
    return kind, size, runs, {"rvm": rvm_times, "rvm-onnx": onnx_times}


def _array(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def check(runs, x, label):
    """rvm against torch eager, rvm-onnx against onnxruntime (1e-3 relative)."""
    outputs = {s: _array(r(x)) for s, r in runs.items()}
    for ours, theirs in (("rvm", "torch"), ("rvm-onnx", "onnxruntime")):
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
    options = parser.parse_args(argv)

    import onnxruntime
    import torch
    import transformers
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(options.threads)
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, transformers "
          f"{transformers.__version__}, onnxruntime {onnxruntime.__version__}; rvm "
          f"relax.build defaults (target 'c'); {options.threads} thread(s) each; "
          f"sequence {options.length}, image {options.image}x{options.image}; "
          f"median [range] of {options.repeat} alternating rounds, ms per call")
    print(f"{'model':8s}{'batch':>6s}" + "".join(f"{s:>25s}" for s in SOURCES)
          + f"{'rvm / torch':>13s}{'rvm / ort':>11s}{'rvm-onnx / ort':>16s}")
    builds = {}
    for name in options.models:
        kind, size, runs, builds[name] = prepare(name, options)
        for batch in options.batches:
            x = hf_models.inputs(kind, size, batch, options.length, seed=batch)
            check(runs, x, f"{name} batch {batch}")
            with threadpool_limits(limits=options.threads):
                samples = alternating_samples({s: (lambda r=r: r(x)) for s, r in runs.items()},
                                              options.repeat)
            med = {s: statistics.median(v) for s, v in samples.items()}
            cells = "".join(f"{med[s] * 1e3:9.3f} [{min(samples[s]) * 1e3:.3f}-"
                            f"{max(samples[s]) * 1e3:.3f}]".rjust(25) for s in SOURCES)
            print(f"{name:8s}{batch:6d}{cells}{med['rvm'] / med['torch']:13.2f}"
                  f"{med['rvm'] / med['onnxruntime']:11.2f}"
                  f"{med['rvm-onnx'] / med['onnxruntime']:16.2f}")
            sys.stdout.flush()
    print("\nexport, import and build (s; one build serves every batch)")
    print(f"{'model':8s}" + "".join(f"{p + ' ' + stage:>18s}" for p in ("rvm", "rvm-onnx")
                                   for stage in ("export", "import", "build")))
    for name, times in builds.items():
        print(f"{name:8s}" + "".join(f"{times[p][stage]:18.2f}" for p in ("rvm", "rvm-onnx")
                                     for stage in ("export", "import", "build")))


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
