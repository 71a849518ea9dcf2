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
