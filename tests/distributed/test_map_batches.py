"""rvm.distributed.map_batches: an executable run over a Ray Dataset by worker actors.

The results are exactly the single-process ones, in order (the test asks Ray
Data to keep order), even with a worker actor killed in the middle; an
executable the loader rejects fails the call with the loader's error before
any batch runs.
"""
import itertools
import json
import struct

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.bytecode.errors import ExecutableFormatError
from rvm.distributed import map_batches
from tests.distributed import model

pytestmark = pytest.mark.distributed

ROWS = 20_000


@pytest.fixture(scope="module")
def executable():
    return model.build()


@pytest.fixture(scope="module")
def data(ray_cluster):
    ray = ray_cluster
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    x = model.rows(ROWS)
    # One column, "data", in 8 blocks: work for every actor.
    return x, ray.data.from_numpy(np.array_split(x, 8))


def _expected(executable, x):
    y, s = relax.VirtualMachine(executable, rvm.cpu())["main"](x)
    return y.numpy(), s.numpy()


def _collect(dataset, on_batch=None):
    batches = []
    for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
        batches.append(batch)
        if on_batch is not None:
            on_batch(len(batches))
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ray_remote_args_fn
def test_exact_results_in_order_though_a_worker_actor_is_killed(ray_cluster, executable, data,
                                                                  tmp_path):
    ray = ray_cluster
    x, dataset = data
    path = tmp_path / "dense.rvm"
    executable.export_library(str(path))
    names = (f"rvm-map-batches-test-{k}" for k in itertools.count())
    result = map_batches(str(path), dataset, batch_size=1000, num_workers=2,
                         input_columns=["data"], output_columns=["y", "row_sum"],
                         ray_remote_args_fn=lambda: {"name": next(names)})
    killed = []

    def kill_one(count):
        if count == 1:  # a batch is out, most are still to come
            actor = ray.get_actor("rvm-map-batches-test-0")
            ray.kill(actor, no_restart=False)  # the actor dies; Ray starts it again
            killed.append(actor)

    out = _collect(result, kill_one)
    assert killed
    y, s = _expected(executable, x)
    assert out["y"].shape == (ROWS, model.HIDDEN)
    np.testing.assert_array_equal(out["y"], y)
    np.testing.assert_array_equal(out["row_sum"], s)


def _with_native_code_only(executable):
    """The executable's bytes with its kernels as hand-written C (no TIR to regenerate from)."""
    library = executable.kernel_libs[0]
    blob = library.save_to_bytes()
    magic = blob[:8]
    parts, offset = [], 8
    while offset < len(blob):
        (size,) = struct.unpack_from("<Q", blob, offset)
        parts.append(blob[offset + 8:offset + 8 + size])
        offset += 8 + size
    header = json.loads(parts[0])
    header["tir"] = False
    parts[0], parts[2] = json.dumps(header).encode(), b""
    hostile = magic + b"".join(struct.pack("<Q", len(p)) + p for p in parts)
    library.save_to_bytes = lambda: hostile
    try:
        return executable.save_to_bytes()
    finally:
        del library.save_to_bytes


def test_rejected_executables_fail_before_any_batch(executable, data):
    _, dataset = data
    good = executable.save_to_bytes()
    with pytest.raises(ExecutableFormatError, match="truncated"):
        map_batches(good[:len(good) // 2], dataset)
    with pytest.raises(ExecutableFormatError, match="bad magic"):
        map_batches(b"not an executable at all", dataset)
    with pytest.raises(ExecutableFormatError, match="holds hand-written C .*trust_native=True"):
        map_batches(_with_native_code_only(executable), dataset)
    with pytest.raises(ValueError, match="no Relax function 'predict'; it has: main"):
        map_batches(good, dataset, fn="predict")
    with pytest.raises(ValueError, match="takes 1 arguments"):
        map_batches(good, dataset, input_columns=["a", "b"])


def test_bad_arguments(executable, data):
    _, dataset = data
    with pytest.raises(TypeError, match="an Executable, a path to a .rvm file or its bytes"):
        map_batches(42, dataset)
    with pytest.raises(TypeError, match="expects a ray.data.Dataset"):
        map_batches(executable, [1, 2, 3])
    with pytest.raises(ValueError, match="num_workers >= 1"):
        map_batches(executable, dataset, num_workers=0)


def test_setup_registers_the_functions_an_executable_calls(ray_cluster, data):
    _, dataset = data
    ex = relax.build(model.Negate, target="c")
    with pytest.raises(ValueError, match="env.rvm_test_negate"):
        map_batches(ex, dataset)  # not registered on the workers
    # The workers' load check passes once setup has registered it there.
    result = map_batches(ex, dataset, setup=model.register_negate)
    assert isinstance(result, ray_cluster.data.Dataset)
