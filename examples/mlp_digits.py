"""Handwritten digits with a 64 -> 128 -> 10 MLP, compiled and run by rvm.

1. Trains the MLP with numpy on scikit-learn's bundled digits data (8x8 images).
2. Writes the model as a script-form IRModule: a TensorIR kernel for each
   linear layer (any batch size; the weight is laid out (in, out), so a tuned
   kernel vectorizes along the outputs; the first layer applies its ReLU as it
   writes its output, so the activation costs no pass over memory), and
   ``main_env_relu``, the same model with its first layer written as Relax
   operators (``R.matmul``, ``R.add``: ``relax.build`` makes their kernel) and
   the activation as an environment function: ``env.relu``, a Python function
   registered with ``rvm.register_func`` that the VM calls through the global
   registry.
3. Binds the trained weights into the module (BindParams), builds it, and
   classifies the held-out images through the VirtualMachine (both functions
   agree).
4. Exports the executable to one file, loads it back, and checks the results.
5. Tunes the kernels of ``main`` for batch 1 and for the whole test set (450
   images) with rvm.meta_schedule, a small budget kept in ``--work-dir`` (a
   second run finds the records and measures nothing), swaps the tuned kernels
   in with ``update_func`` as seed 004 does, and checks the results again. Each
   kernel goes to ``tune_tir`` marked with ``layout_free_buffers`` (its weight and
   bias are bound), so it is tuned as the build runs it: starting from the default
   build's schedule, the weight packed once rather than in every measured call.
6. Prints the accuracy (equal to numpy's) and the latency of ``main`` in the
   default build (``relax.build``'s rule-based schedules, no tuning) and with
   the tuned kernels next to numpy's, at batch 1, 64 and 450 (``--threads``
   gives rvm and numpy's BLAS the same threads; ``--rounds`` alternates the
   measurements and prints the median and range over the rounds).

    pip install -e ".[examples]" && python examples/mlp_digits.py
"""
import argparse
import pathlib
import statistics
import tempfile
import time

import numpy as np

import rvm
from rvm import meta_schedule as ms
from rvm import relax
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741  (TVM's spelling)

HIDDEN = 128
CLASSES = 10


def load_data(seed):
    """The digits images scaled to [0, 1] as float32, split 75/25 (stratified)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype("float32")
    return train_test_split(x, digits.target, test_size=0.25, random_state=seed,
                            stratify=digits.target)


def train(x, y, seed, epochs=60, lr=0.1, batch=32):
    """Plain minibatch SGD on softmax cross-entropy; returns the weights by name."""
    rng = np.random.default_rng(seed)
    features = x.shape[1]
    w0 = (rng.standard_normal((HIDDEN, features)) * np.sqrt(2 / features)).astype("float32")
    b0 = np.zeros(HIDDEN, "float32")
    w1 = (rng.standard_normal((CLASSES, HIDDEN)) * np.sqrt(2 / HIDDEN)).astype("float32")
    b1 = np.zeros(CLASSES, "float32")
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            xb, yb = x[idx], y[idx]
            hidden = xb @ w0.T + b0
            act = np.maximum(hidden, 0)
            logits = act @ w1.T + b1
            grad = np.exp(logits - logits.max(axis=1, keepdims=True))
            grad /= grad.sum(axis=1, keepdims=True)
            grad[np.arange(len(yb)), yb] -= 1
            grad /= len(yb)
            dact = grad @ w1
            dact[hidden <= 0] = 0
            w1 -= lr * (grad.T @ act)
            b1 -= lr * grad.sum(axis=0)
            w0 -= lr * (dact.T @ xb)
            b0 -= lr * dact.sum(axis=0)
    return {"w0": w0, "b0": b0, "w1": w1, "b1": b1}


def numpy_forward(params, x):
    hidden = np.maximum(x @ params["w0"].T + params["b0"], 0)
    return hidden @ params["w1"].T + params["b1"]


# The kernels index with int64 throughout, as the importers' kernels do: the batch is an
# int64 shape variable, and one index type keeps the default schedule's tile arithmetic
# free of casts.
@I.ir_module
class DigitsMLP:
    @T.prim_func
    def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(64)), "float32")
        W = T.match_buffer(w, (T.int64(64), T.int64(128)), "float32")
        B = T.match_buffer(b, (T.int64(128),), "float32")
        Z = T.match_buffer(z, (n, T.int64(128)), "float32")
        Y = T.alloc_buffer((n, T.int64(128)), "float32")
        for i, j, r in T.grid(n, T.int64(128), T.int64(64)):
            with T.block("Y"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vr] * W[vr, vj]
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = T.max(Y[vi, vj] + B[vj], T.float32(0))  # bias, then ReLU

    @T.prim_func
    def linear1(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        W = T.match_buffer(w, (T.int64(128), T.int64(10)), "float32")
        B = T.match_buffer(b, (T.int64(10),), "float32")
        Z = T.match_buffer(z, (n, T.int64(10)), "float32")
        Y = T.alloc_buffer((n, T.int64(10)), "float32")
        for i, j, r in T.grid(n, T.int64(10), T.int64(128)):
            with T.block("Y"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vr] * W[vr, vj]
        for i, j in T.grid(n, T.int64(10)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor(("batch", 64), "float32"),
             w0: R.Tensor((64, 128), "float32"), b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((128, 10), "float32"), b1: R.Tensor((10,), "float32")):
        batch = T.int64()
        cls = DigitsMLP
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((batch, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv0, w1, b1), out_sinfo=R.Tensor((batch, 10), "float32"))
            R.output(out)
        return out

    @R.function
    def main_env_relu(x: R.Tensor(("batch", 64), "float32"),
                      w0: R.Tensor((64, 128), "float32"), b0: R.Tensor((128,), "float32"),
                      w1: R.Tensor((128, 10), "float32"), b1: R.Tensor((10,), "float32")):
        batch = T.int64()
        cls = DigitsMLP
        with R.dataflow():
            # the first layer as Relax operators, which relax.build turns into a kernel
            mm = R.matmul(x, w0)
            lv0 = R.add(mm, b0)
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((batch, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((batch, 10), "float32"))
            R.output(out)
        return out


@rvm.register_func("env.relu", override=True)
def relu(x, out):
    """The activation of ``main_env_relu``, run by numpy on zero-copy views of the VM's
    tensors."""
    np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))


def bind_weights(params, mod=DigitsMLP):
    """``mod`` with the trained weights bound into both functions; the kernels take the
    weights laid out (in, out): the trained (out, in) ones transposed."""
    weights = {k: rvm.nd.array(np.ascontiguousarray(v.T) if k.startswith("w") else v)
               for k, v in params.items()}
    for name in ("main", "main_env_relu"):
        mod = relax.transform.BindParams(name, weights)(mod)
    return mod


def tune_for_batch(bound, batch, work_dir, trials):
    """A copy of ``bound`` whose kernels are tuned for ``batch`` rows (seed 004 §5.4's steps):
    each kernel is specialized to the batch, taken out as the "main" of its own module,
    tuned, and the best schedule swapped back in with update_func. The weight and the bias
    (parameters 1 and 2) are bound constants: ``layout_free_buffers`` tells ``tune_tir``,
    which then tunes the kernel as the build runs it (a weight packed once, at build)."""
    tuned = bound.copy()
    for name in ("linear0", "linear1"):
        kernel = bound[name]
        rows = kernel.buffer_map[kernel.params[0]].shape[0]  # the symbolic batch dimension
        specialized = kernel.specialize({rows: batch}).with_attr("global_symbol", "main")
        mod = rvm.IRModule.from_expr(specialized.with_attr("layout_free_buffers", [1, 2]))
        database = ms.tune_tir(mod=mod, target="llvm", work_dir=work_dir,
                               max_trials_global=trials, num_trials_per_iter=trials,
                               task_name=f"{name}_batch{batch}")
        sch = ms.tir_integration.compile_tir(database, mod, "llvm")
        tuned.update_func(tuned.get_global_var(name),
                          sch.mod["main"].with_attr("global_symbol", name))
    return tuned


def median_us(fn, repeat=200):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def latency_table(runs, rounds):
    """``runs``: {batch: {"default" | "tuned" | "numpy": callable}}. Each round measures every
    callable once (a median of many calls), alternating; prints, per batch, the median over
    the rounds of each and of the per-round ratios to numpy, then the ranges."""
    samples = {batch: {name: [] for name in fns} for batch, fns in runs.items()}
    for _ in range(rounds):
        for batch, fns in runs.items():
            for name, fn in fns.items():
                samples[batch][name].append(median_us(fn, 200 if batch == 1 else 50))
    print(f"{'latency (median)':18s} {'default us':>10s} {'tuned us':>9s} {'numpy us':>9s} "
          f"{'default/numpy':>14s} {'tuned/numpy':>12s}")
    for batch, got in samples.items():
        cells, ratios = [], []
        for name in ("default", "tuned"):
            if name in got:
                cells.append(statistics.median(got[name]))
                ratio = statistics.median(a / b for a, b in zip(got[name], got["numpy"]))
                ratios.append(f"{ratio:.2f}")
            else:
                cells.append(None)
                ratios.append("-")
        cells.append(statistics.median(got["numpy"]))
        text = [f"{c:.1f}" if c is not None else "-" for c in cells]
        print(f"{'batch ' + str(batch):18s} {text[0]:>10s} {text[1]:>9s} {text[2]:>9s} "
              f"{ratios[0]:>14s} {ratios[1]:>12s}")
    if rounds > 1:
        for batch, got in samples.items():
            ranges = ", ".join(f"{name} [{min(v):.1f}, {max(v):.1f}]" for name, v in got.items())
            print(f"  batch {batch} over {rounds} rounds (us): {ranges}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", default="c", choices=["c", "python"])
    parser.add_argument("--work-dir", default="mlp_digits_tuning",
                        help="where tuning records are kept (a second run reuses them)")
    parser.add_argument("--trials", type=int, default=12, help="tuning trials per kernel")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for rvm's kernels and numpy's BLAS alike (0: each "
                             "library's default)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternating rounds of latency measurements")
    parser.add_argument("--export", metavar="DIR",
                        help="keep the executable (digits_mlp.rvm) and 8 test images "
                             "(digits_x.npy) in DIR, for `rvm run`")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    x_train, x_test, y_train, y_test = load_data(args.seed)
    params = train(x_train, y_train, args.seed)
    numpy_pred = np.argmax(numpy_forward(params, x_test), axis=1)
    numpy_acc = float((numpy_pred == y_test).mean())
    print(f"trained with numpy in {time.perf_counter() - start:.2f} s: "
          f"test accuracy {numpy_acc:.4f} on {len(y_test)} images")

    bound = bind_weights(params)
    start = time.perf_counter()
    ex = relax.build(bound, target=args.target)
    print(f"built in {time.perf_counter() - start:.2f} s: {ex.stats()}")
    vm = relax.VirtualMachine(ex, rvm.cpu())

    logits = vm["main"](rvm.nd.array(x_test)).numpy()
    rvm_pred = np.argmax(logits, axis=1)
    rvm_acc = float((rvm_pred == y_test).mean())
    np.testing.assert_allclose(logits, numpy_forward(params, x_test), rtol=1e-4, atol=1e-4)
    assert rvm_acc == numpy_acc, (rvm_acc, numpy_acc)
    print(f"rvm VM test accuracy {rvm_acc:.4f} (numpy {numpy_acc:.4f}): "
          f"{int((rvm_pred == numpy_pred).sum())}/{len(y_test)} predictions agree")
    via_env = vm["main_env_relu"](rvm.nd.array(x_test)).numpy()
    np.testing.assert_allclose(via_env, logits, rtol=1e-5, atol=1e-5)
    print("main_env_relu (the ReLU as the Python function env.relu): same logits")

    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "digits_mlp.rvm"
        ex.export_library(str(path))
        loaded = rvm.runtime.load_module(str(path))
        reloaded = relax.VirtualMachine(loaded, rvm.cpu())
        again = reloaded["main"](rvm.nd.array(x_test)).numpy()
        np.testing.assert_array_equal(again, logits)
        print(f"exported {path.stat().st_size} bytes, reloaded: identical results")
    if args.export:
        out = pathlib.Path(args.export)
        out.mkdir(parents=True, exist_ok=True)
        ex.export_library(str(out / "digits_mlp.rvm"))
        np.save(out / "digits_x.npy", x_test[:8])
        print(f"kept {out / 'digits_mlp.rvm'} and {out / 'digits_x.npy'} "
              f"(labels {y_test[:8].tolist()})")

    if args.threads:
        rvm.runtime.set_num_threads(args.threads)
    data = {batch: rvm.nd.array(x_test[:batch]) for batch in (1, 64, len(x_test))}
    tuned_vms = {}
    if args.target == "c":
        start = time.perf_counter()
        for batch in (1, len(x_test)):
            tuned = tune_for_batch(bound, batch, args.work_dir, args.trials)
            tuned_vms[batch] = relax.VirtualMachine(relax.build(tuned, target="c"), rvm.cpu())
            got = tuned_vms[batch]["main"](data[batch]).numpy()
            np.testing.assert_allclose(got, logits[:batch], rtol=1e-4, atol=1e-4)
        print(f"tuned the kernels for batch {' and '.join(map(str, tuned_vms))} in "
              f"{time.perf_counter() - start:.1f} s ({args.trials} trials per kernel, records in "
              f"{args.work_dir}): same predictions")

    runs = {}
    for batch, x in data.items():
        x_np = x_test[:batch]
        runs[batch] = {"default": lambda x=x: vm["main"](x),
                       "numpy": lambda x_np=x_np: numpy_forward(params, x_np)}
        if batch in tuned_vms:
            runs[batch]["tuned"] = lambda x=x, tuned=tuned_vms[batch]: tuned["main"](x)
    if args.threads:
        from threadpoolctl import threadpool_limits  # installed with scikit-learn

        print(f"{args.threads} threads each (rvm's kernels, numpy's BLAS)")
        with threadpool_limits(args.threads):
            latency_table(runs, args.rounds)
    else:
        latency_table(runs, args.rounds)

if __name__ == "__main__":
    main()
