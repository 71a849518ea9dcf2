"""A small model for the Ray tests and benchmark: relu(x @ w + b) over a symbolic batch,
with its weights bound, built for the C target."""
import numpy as np

from rvm import relax
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741

FEATURES, HIDDEN = 16, 32


@I.ir_module
class Dense:
    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w: R.Tensor((16, 32), "float32"),
             b: R.Tensor((32,), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.add(R.matmul(x, w), b))
            s = R.sum(y, axis=[1])
            R.output(y, s)
        return (y, s)


def weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"w": rng.standard_normal((FEATURES, HIDDEN)).astype("float32"),
            "b": rng.standard_normal((HIDDEN,)).astype("float32")}


def build():
    """The executable of Dense with its weights bound: main(x) -> (y, row sums of y)."""
    return relax.build(Dense, target="c", params=weights())


def rows(count, seed=1):
    return np.random.default_rng(seed).standard_normal((count, FEATURES)).astype("float32")


@I.ir_module
class Negate:
    """Calls a Python function the workers know only after ``register_negate`` ran."""

    @R.function
    def main(x: R.Tensor(("n", 16), "float32")):
        n = T.int64()
        with R.dataflow():
            y = R.call_dps_packed("env.rvm_test_negate", (x,), R.Tensor((n, 16), "float32"))
            R.output(y)
        return y


def register_negate():
    """Registers env.rvm_test_negate (a setup function for the workers)."""
    import rvm

    @rvm.register_func("env.rvm_test_negate", override=True)
    def negate(x, out):
        np.negative(np.from_dlpack(x), out=np.from_dlpack(out))


@I.ir_module
class GatedDense:
    """Dense behind ``env.rvm_test_gate`` (a copy of x that may block a batch, see
    ``register_gate``): the same outputs as Dense."""

    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w: R.Tensor((16, 32), "float32"),
             b: R.Tensor((32,), "float32")):
        n = T.int64()
        with R.dataflow():
            g = R.call_dps_packed("env.rvm_test_gate", (x,), R.Tensor((n, 16), "float32"))
            y = R.nn.relu(R.add(R.matmul(g, w), b))
            s = R.sum(y, axis=[1])
            R.output(y, s)
        return (y, s)


def build_gated():
    """The executable of GatedDense with Dense's weights bound."""
    return relax.build(GatedDense, target="c", params=weights())


GATE_WAIT_SECONDS = 30.0


def register_gate(directory=None, marked_row=None, crash=False):
    """Registers env.rvm_test_gate (a setup function for the workers): it copies x to out.

    With a ``directory``, every call (an attempt at a batch) first writes
    ``attempt-<key>-<uuid>`` there (key: a hash of the batch's bytes; content:
    the actor's name, the row count and the worker's pid) and, once the copy is made,
    ``done-<key>-<uuid>``. A batch holding the row ``marked_row`` is held at
    the gate: the attempt writes ``held-<uuid>`` and waits until the file
    ``release`` exists (an error after GATE_WAIT_SECONDS, never a hang); with
    ``crash``, it ends its worker process instead, as a crashing kernel would.
    """
    import hashlib
    import os
    import time
    import uuid

    import rvm

    marked = None if marked_row is None else np.asarray(marked_row, dtype="float32")

    def write(name, text):
        tmp = os.path.join(directory, f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(directory, name))  # never seen half written

    @rvm.register_func("env.rvm_test_gate", override=True)
    def gate(x, out):
        x = np.from_dlpack(x)
        if directory is not None:
            import ray

            key = hashlib.sha1(x.tobytes()).hexdigest()[:16]
            attempt = uuid.uuid4().hex
            record = f"{ray.get_runtime_context().get_actor_name()} {len(x)} {os.getpid()}"
            write(f"attempt-{key}-{attempt}", record)
            if marked is not None and np.all(x == marked, axis=1).any():
                write(f"held-{attempt}", record)
                if crash:
                    os._exit(70)
                deadline = time.monotonic() + GATE_WAIT_SECONDS
                while not os.path.exists(os.path.join(directory, "release")):
                    if time.monotonic() > deadline:
                        raise TimeoutError("rvm_test_gate: the test never released the gate")
                    time.sleep(0.01)
        np.copyto(np.from_dlpack(out), x)
        if directory is not None:
            write(f"done-{key}-{attempt}", record)
