"""SPEC.md §3 and seed 004's modules as users write them, and the MLP's weights.

Shared by the script tests (which parse the text) and the pass tests (which
lower the parsed modules); tests/e2e keeps its own copies, written exactly
as SPEC.md shows them.
"""
import numpy as np

RELU0 = '''
    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (1, n), "float32")
        Y = T.match_buffer(y, (1, n), "float32")
        for i, j in T.grid(1, n):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
'''

LINEAR0 = '''
    @T.prim_func
    def linear0(x: T.handle,
                w: T.handle,
                b: T.handle,
                z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n, ), "float32")
        Z = T.match_buffer(z, (1, n), "float32")
        Y = T.alloc_buffer((1, n), "float32")
        for i, j, k in T.grid(1, n, m):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, n):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]
'''


def _main(names):
    """Seed 004's main, calling ``names`` = (first linear, relu, second linear)."""
    first, relu, second = names
    return f'''
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"),
             b0: R.Tensor(("n", ), "float32"),
             w1: R.Tensor(("k", "n"), "float32"),
             b1: R.Tensor(("k", ), "float32")):
        # block 0
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("{first}", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("{relu}", (lv0, ), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("{second}", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out
'''


MY_MODULE = ("@I.ir_module\nclass MyModule:" + RELU0 + LINEAR0
             + _main(("linear0", "relu0", "linear0")))
MY_MODULE_WITH_EXTERN_CALL = ("@I.ir_module\nclass MyModuleWithExternCall:"
                              + _main(("env.linear", "env.relu", "env.linear")))
MY_MODULE_MIXTURE = ("@I.ir_module\nclass MyModuleMixture:" + LINEAR0
                     + _main(("linear0", "env.relu", "env.linear")))


def mlp_params(seed=0):
    """Random weights of the SPEC's 784-128-10 MLP."""
    rng = np.random.default_rng(seed)
    return {"w0": rng.standard_normal((128, 784)).astype("float32"),
            "b0": rng.standard_normal(128).astype("float32"),
            "w1": rng.standard_normal((10, 128)).astype("float32"),
            "b1": rng.standard_normal(10).astype("float32")}


def mlp_reference(x, p):
    """numpy's answer for the MLP."""
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]
