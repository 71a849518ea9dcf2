"""SPEC §4 as written: build the §3 module, run it, inspect, export and reload it."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I, relax as R, tir as T


@I.ir_module
class MyModule:
    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (1, n), "float32")
        Y = T.match_buffer(y, (1, n), "float32")
        for i, j in T.grid(1, n):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
        m, n, k = T.int64(), T.int64(), T.int64()
        X = T.match_buffer(x, (1, m), "float32")
        W = T.match_buffer(w, (n, m), "float32")
        B = T.match_buffer(b, (n,), "float32")
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

    @R.function
    def main(x: R.Tensor((1, "m"), "float32"),
             w0: R.Tensor(("n", "m"), "float32"), b0: R.Tensor(("n",), "float32"),
             w1: R.Tensor(("k", "n"), "float32"), b1: R.Tensor(("k",), "float32")):
        m, n, k = T.int64(), T.int64(), T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, n), "float32"))
            lv1 = R.call_dps_packed("relu0", (lv0,), R.Tensor((1, n), "float32"))
            out = R.call_dps_packed("linear0", (lv1, w1, b1), R.Tensor((1, k), "float32"))
            R.output(out)
        return out


def mlp_inputs(seed=0):
    """x (1x784) and the parameters of a 784-128-10 MLP, as numpy arrays."""
    rng = np.random.default_rng(seed)
    x = rng.random((1, 784), dtype=np.float32)
    params = {"w0": (rng.standard_normal((128, 784)) * 0.05).astype("float32"),
              "b0": (rng.standard_normal(128) * 0.05).astype("float32"),
              "w1": (rng.standard_normal((10, 128)) * 0.1).astype("float32"),
              "b1": (rng.standard_normal(10) * 0.1).astype("float32")}
    return x, params


def numpy_mlp(x, p):
    """The reference MLP in numpy."""
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]


@pytest.fixture(scope="module")
def ex():
    return relax.build(MyModule, target="c")


def _args(x, p):
    return [rvm.nd.array(x)] + [rvm.nd.array(p[k]) for k in ("w0", "b0", "w1", "b1")]


@pytest.mark.parametrize("target", ["c", "python"])
def test_build_and_run(target):
    x, p = mlp_inputs()
    ex = relax.build(MyModule, target=target)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    out = vm["main"](*_args(x, p))
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)
    assert np.argmax(out.numpy(), axis=1) == np.argmax(numpy_mlp(x, p), axis=1)


def test_numpy_arrays_pass_directly(ex):
    x, p = mlp_inputs(1)
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](x, p["w0"], p["b0"], p["w1"], p["b1"])
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)


def test_as_text_and_stats(ex):
    text = ex.as_text()
    assert "call  linear0" in text and "call  relu0" in text
    assert "functions:" in ex.stats() and "instructions:" in ex.stats()


def test_stateful_api(ex):
    x, p = mlp_inputs(2)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    vm.set_input("main", *_args(x, p))
    vm.invoke_stateful("main")
    np.testing.assert_allclose(vm.get_outputs("main").numpy(), numpy_mlp(x, p), rtol=1e-5,
                               atol=1e-5)


def test_time_evaluator_and_profile(ex):
    x, p = mlp_inputs(3)
    vm = relax.VirtualMachine(ex, rvm.cpu())
    result = vm.time_evaluator("main", rvm.cpu(), number=5, repeat=2)(*_args(x, p))
    assert result.mean > 0 and result.median > 0 and result.min > 0 and len(result.results) == 2
    report = vm.profile("main", *_args(x, p))
    callees = {row["callee"] for row in report.rows}
    assert {"linear0", "relu0"} <= callees
    assert "linear0" in str(report)


def test_export_and_load_in_a_fresh_process(ex, tmp_path):
    x, p = mlp_inputs(4)
    path = tmp_path / "mlp.rvm"
    ex.export_library(str(path))
    np.savez(tmp_path / "inputs.npz", x=x, **p)
    script = textwrap.dedent(f"""
        import numpy as np, rvm
        from rvm import relax
        data = np.load({str(tmp_path / 'inputs.npz')!r})
        loaded = rvm.runtime.load_module({str(path)!r})
        vm = relax.VirtualMachine(loaded, rvm.cpu())
        out = vm["main"](*[rvm.nd.array(data[k]) for k in ("x", "w0", "b0", "w1", "b1")])
        np.save({str(tmp_path / 'out.npy')!r}, out.numpy())
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), numpy_mlp(x, p), rtol=1e-5,
                               atol=1e-5)


def test_executable_load(ex, tmp_path):
    path = tmp_path / "mlp.rvm"
    ex.export_library(str(path))
    loaded = relax.Executable.load(str(path))
    x, p = mlp_inputs(5)
    out = relax.VirtualMachine(loaded, rvm.cpu())["main"](*_args(x, p))
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, p), rtol=1e-5, atol=1e-5)


def test_inconsistent_shapes_name_function_parameter_and_values(ex):
    x, p = mlp_inputs()
    vm = relax.VirtualMachine(ex, rvm.cpu())
    with pytest.raises(ValueError, match=r"main.*w1"):
        vm["main"](x, p["w0"], p["b0"], np.zeros((10, 64), "float32"), p["b1"])
    with pytest.raises((TypeError, ValueError), match=r"main.*x.*float32"):
        vm["main"](x.astype("float64"), p["w0"], p["b0"], p["w1"], p["b1"])
    with pytest.raises(ValueError, match=r"main.*x.*rank|main.*x.*ndim"):
        vm["main"](x.reshape(784), p["w0"], p["b0"], p["w1"], p["b1"])
    with pytest.raises(TypeError, match=r"main.*5 argument"):
        vm["main"](x, p["w0"], p["b0"], p["w1"])
