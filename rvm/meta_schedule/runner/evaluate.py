"""What a runner's worker process does with one candidate: check it, then time it.

The candidate and the unscheduled reference kernel run on the same random
arguments (seeded, so every candidate of a workload sees the same ones);
every argument must come out equal within float tolerance, or the
candidate fails with the first differing element. Then ``time_evaluator``
measures it, alone on the machine: timings take a lock (``measuring_alone``) that
every process of every runner on the machine shares, so candidates checked and
compiled in parallel are never timed at once (two measurements at once slow each
other, and not by the same amount for every schedule, which would reorder the
candidates). Libraries and the reference's outputs stay loaded in the worker, so
a workload's reference runs once per worker. A candidate built with its packing of
constant inputs split off (``spec["preprocs"]``, see ``meta_schedule.layout_preproc``)
has those random inputs packed in numpy by the build's own ``Preproc.apply`` (once per
worker and layout: candidates packing alike share the packed copy), then its compute
kernel checked and timed with the packed buffers in the inputs' places: timed as the
build runs it.
"""
import contextlib
import fcntl
import os
import pathlib
import pickle
import tempfile

import numpy as np

from rvm.meta_schedule.arg_info import ArgInfo
from rvm.runtime.compiler import CompiledLibrary, default_compiler
from rvm.runtime.kernel_library import KernelLibrary
from rvm.runtime.ndarray import array
from rvm.runtime.profiling import time_evaluator
from rvm.support.hardware import hardware_fingerprint

RTOL = 1e-3
ATOL = 1e-4  # times the largest magnitude of the expected tensor (at least 1)
_LIBRARIES = {}
_EXPECTED = {}
_PACKED = {}  # (seed, args_info, pickled Preproc) -> the packed copy of that input
_PACKED_SIZE = 16


MEASURE_LOCK = pathlib.Path(tempfile.gettempdir()) / "rvm-measure.lock"


@contextlib.contextmanager
def measuring_alone(path=MEASURE_LOCK):
    """Holds the machine's measurement lock (an exclusive ``flock`` of ``path``, released
    by the system if the process dies) for the ``with`` block."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)  # read-only: any user may lock it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class WrongResultError(ValueError):
    """The candidate's outputs differ from the unscheduled kernel's."""

    plain_message = True


def load_kernel(artifact_path, functions, func_name):
    """The packed function ``func_name`` of the compiled library at ``artifact_path``."""
    lib = _LIBRARIES.get(artifact_path)
    if lib is None:
        compiled = CompiledLibrary(pathlib.Path(artifact_path), "", True)
        lib = _LIBRARIES[artifact_path] = KernelLibrary("", functions, compiled, compiler=None)
    return lib[func_name]


def random_arguments(args_info, seed):
    """Numpy arrays for ``args_info``: floats uniform in [-1, 1), integers in {0, 1}
    (safe as indices), booleans random."""
    rng = np.random.default_rng(seed)
    arrays = []
    for info in args_info:
        dtype = np.dtype(str(info.dtype))
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1.0, 1.0, info.shape).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, info.shape).astype(dtype))
        elif dtype.kind in "iu":
            arrays.append(rng.integers(0, 2, info.shape).astype(dtype))
        else:
            raise ValueError(f"cannot make random arguments of dtype {info.dtype}")
    return arrays


def _run(func, arrays):
    args = [array(a) for a in arrays]
    func(*args)
    return args


def pack_inputs(spec, inputs):
    """``inputs`` with the input of each Preproc of ``spec["preprocs"]`` replaced by its
    packed copy (``Preproc.apply``, kept per worker for the same inputs and layout), or
    ``inputs`` when nothing is packed."""
    preprocs = spec.get("preprocs") or ()
    packed = list(inputs)
    for pre in preprocs:
        key = (spec["seed"], repr(spec["args_info"]), pickle.dumps(pre))
        copy = _PACKED.get(key)
        if copy is None:
            copy = pre.apply(inputs[pre.position])
            if len(_PACKED) >= _PACKED_SIZE:
                del _PACKED[next(iter(_PACKED))]  # the oldest
            _PACKED[key] = copy
        packed[pre.position] = copy
    return packed


def check_outputs(got, expected, args_info):
    """Raises WrongResultError naming the first argument and element that differ."""
    for index, (g, e, info) in enumerate(zip(got, expected, args_info)):
        if g.dtype.kind == "f":
            scale = max(1.0, float(np.nanmax(np.abs(e), initial=0.0)))
            close = np.isclose(g, e, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
        else:
            close = g == e
        if not close.all():
            bad = np.argwhere(~close)[0]
            where = tuple(int(i) for i in bad)
            raise WrongResultError(
                f"wrong result: argument {index} ({info.dtype}{info.shape}) differs from the "
                f"unscheduled kernel in {int((~close).sum())} elements; at {list(where)} got "
                f"{g[where].item()!r}, expected {e[where].item()!r}")


def evaluate(spec):
    """Worker job: checks the candidate of ``spec`` against its reference, then times it.

    ``spec`` holds artifact_path, functions, func_name, args_info (JSON),
    reference (None or {artifact_path, functions}), seed, preprocs (the Preproc of each
    input the kernel takes packed) and config (number, repeat, min_repeat_ms). Returns
    {"run_secs": [...], "fingerprint": ...}.
    """
    args_info = [ArgInfo.from_json(a) for a in spec["args_info"]]
    inputs = random_arguments(args_info, spec["seed"])
    func = load_kernel(spec["artifact_path"], spec["functions"], spec["func_name"])
    reference = spec.get("reference")
    if reference is not None:
        key = (reference["artifact_path"], spec["func_name"], spec["seed"], repr(spec["args_info"]))
        expected = _EXPECTED.get(key)
        if expected is None:
            ref = load_kernel(reference["artifact_path"], reference["functions"],
                              spec["func_name"])
            expected = _EXPECTED[key] = [a.numpy() for a in _run(ref, inputs)]
        args = _run(func, pack_inputs(spec, inputs))
        got = [a.numpy() for a in args]
        for pre in spec.get("preprocs") or ():
            got[pre.position] = inputs[pre.position]  # an input, read only: compared unpacked
        check_outputs(got, expected, args_info)
    else:
        args = _run(func, pack_inputs(spec, inputs))
    config = spec["config"]
    timer = time_evaluator(func, config["number"], config["repeat"], config["min_repeat_ms"])
    with measuring_alone():
        run_secs = list(timer(*args).results)
    return {"run_secs": run_secs, "fingerprint": hardware_fingerprint(default_compiler())}
