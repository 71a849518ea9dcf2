"""rvm.distributed.map_batches: an executable run over a Ray Dataset by worker actors.

The results are exactly the single-process ones, in order (the test asks Ray
Data to keep order), even when a worker actor is killed while a batch is inside
it (the batch runs again on a live actor); an
executable the loader rejects fails the call with the loader's error before
any batch runs.
"""
import functools
import itertools
import json
import struct
import threading
import time

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


def _collect(dataset):
    batches = list(dataset.iter_batches(batch_size=None, batch_format="numpy"))
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


def _attempts(directory, prefix):
    """{batch key: [(actor, rows), ...]} of the gate's files named ``prefix-<key>-<attempt>``."""
    found = {}
    for path in directory.glob(f"{prefix}-*"):
        _, key, _ = path.name.split("-")
        actor, rows, _ = path.read_text().split()
        found.setdefault(key, []).append((actor, int(rows)))
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _kill_the_holder(ray, gate, stop, killed):
    """Waits for a batch to be held at the gate, kills the actor holding it (Ray restarts it)
    and, once its process is gone (ray.kill does not wait), releases the gate."""
    deadline = time.monotonic() + model.GATE_WAIT_SECONDS
    while not stop.is_set() and time.monotonic() < deadline:
        held = sorted(gate.glob("held-*"))
        if held:
            actor, _, pid = held[0].read_text().split()
            ray.kill(ray.get_actor(actor), no_restart=False)
            killed.append(actor)
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            break
        time.sleep(0.02)
    (gate / "release").touch()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ray_remote_args_fn
def test_a_batch_lost_with_its_worker_actor_is_run_again(ray_cluster, data, tmp_path):
    """A worker actor is killed while a batch is inside it (held at a gate): that batch
    runs again and the result is exact and in order."""
    ray = ray_cluster
    x, dataset = data
    gate = tmp_path / "gate"
    gate.mkdir()
    path = tmp_path / "gated.rvm"
    model.build_gated().export_library(str(path))
    marked = ROWS // 2  # a row in the middle: batches before it are done, others wait
    setup = functools.partial(model.register_gate, str(gate), x[marked].tolist())
    names = (f"rvm-map-batches-gate-{k}" for k in itertools.count())
    result = map_batches(str(path), dataset, batch_size=1000, num_workers=2,
                         input_columns=["data"], output_columns=["y", "row_sum"], setup=setup,
                         ray_remote_args_fn=lambda: {"name": next(names)})
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_the_holder, args=(ray, gate, stop, killed))
    killer.start()
    try:
        out = _collect(result)
    finally:
        stop.set()
        killer.join()
    assert len(killed) == 1, "no batch was held at the gate"
    attempts, done = _attempts(gate, "attempt"), _attempts(gate, "done")
    held = [key for key in attempts if len(attempts[key]) > len(done.get(key, []))]
    assert len(held) == 1, f"one attempt, the held one, never finished: {attempts} {done}"
    key = held[0]
    assert len(attempts[key]) == 2 and len(done[key]) == 1, "the held batch ran again, once"
    assert sum(runs[0][1] for runs in done.values()) == ROWS  # every row in a finished batch
    y, s = _expected(model.build(), x)  # the model without the gate
    assert out["y"].shape == (ROWS, model.HIDDEN)
    np.testing.assert_array_equal(out["y"], y)
    np.testing.assert_array_equal(out["row_sum"], s)


def test_a_batch_that_always_kills_its_worker_fails_after_its_retries(ray_cluster, tmp_path):
    """A batch whose every attempt ends its worker (a crashing kernel) runs 1 + retries times,
    then the iteration fails: no endless restart loop."""
    ray = ray_cluster
    gate = tmp_path / "gate"
    gate.mkdir()
    x = model.rows(400)
    setup = functools.partial(model.register_gate, str(gate), x[300].tolist(), crash=True)
    dataset = ray.data.from_numpy(np.array_split(x, 4))
    result = map_batches(model.build_gated(), dataset, batch_size=100, num_workers=1,
                         setup=setup, retries=1)
    with pytest.raises(ray.exceptions.RayError):  # the lost actor's error
        _collect(result)
    held = list(gate.glob("held-*"))
    assert len(held) == 2, f"the first attempt and one retry: {sorted(p.name for p in held)}"


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
    for retries in (-1, 1.5, True):
        with pytest.raises(ValueError, match="retries must be an int >= 0, got"):
            map_batches(executable, dataset, retries=retries)


def test_setup_registers_the_functions_an_executable_calls(ray_cluster, data):
    _, dataset = data
    ex = relax.build(model.Negate, target="c")
    with pytest.raises(ValueError, match="env.rvm_test_negate"):
        map_batches(ex, dataset)  # not registered on the workers
    # The workers' load check passes once setup has registered it there.
    result = map_batches(ex, dataset, setup=model.register_negate)
    assert isinstance(result, ray_cluster.data.Dataset)
