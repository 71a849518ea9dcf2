"""The ``rvm`` command line end to end, in processes of its own: each command, bad files, bad
inputs."""
import os
import pathlib
import tomllib

import numpy as np
import pytest

from tests.fork_runner import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = '''
from rvm.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add_one(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in T.grid(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(y)
        return y
'''


# what ``python -m rvm.driver.cli`` and the ``rvm`` console script run
_CLI = "import sys\nfrom rvm.driver.cli import main\nsys.exit(main())\n"


def rvm(*args, cwd, stdin=None):
    """Runs the command line of the rvm under test (this checkout's, whatever is installed),
    as the ``rvm`` console script would, with ``stdin`` (text) as its input: in a fresh
    process forked from one that has imported it (tests/fork_runner.py)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return run_python(_CLI, list(map(str, args)), env, timeout=300, cwd=cwd, stdin=stdin,
                      preload=("numpy", "rvm", "rvm.driver.cli"))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "model.py").write_text(MODEL)
    np.save(d / "x.npy", np.arange(5, dtype="float32"))
    np.save(d / "matrix.npy", np.zeros((2, 2), "float32"))
    np.save(d / "ints.npy", np.arange(5))
    built = rvm("build", "model.py", "-o", "model.rvm", cwd=d)
    assert built.returncode == 0, built.stderr
    assert "wrote model.rvm" in built.stdout
    return d


def test_the_console_script_is_declared():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["rvm"] == "rvm.driver.cli:main"


def test_run_prints_or_saves_the_result(work):
    out = rvm("run", "model.rvm", "--input", "x.npy", "--repeat", "3", cwd=work)
    assert out.returncode == 0, out.stderr
    assert "output 0: float32[5]" in out.stdout and "[1. 2. 3. 4. 5.]" in out.stdout
    assert "2 more runs: median" in out.stdout
    saved = rvm("run", "model.rvm", "-i", "x.npy", "-o", "y.npy", "--engine", "python", cwd=work)
    assert saved.returncode == 0, saved.stderr
    np.testing.assert_array_equal(np.load(work / "y.npy"), np.arange(1, 6, dtype="float32"))


@pytest.mark.parametrize("args, message", [
    (["-i", "matrix.npy"], "parameter 'x' expects float32[n]: expected a Tensor of rank 1"),
    (["-i", "ints.npy"], "parameter 'x' expects float32"),
    ([], "main(x) takes 1 inputs, 0 given"),
    (["-i", "model.py"], "cannot read input model.py"),
])
def test_run_reports_bad_inputs(work, args, message):
    out = rvm("run", "model.rvm", *args, cwd=work)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("rvm: error: ")
    assert len(out.stderr.strip().splitlines()) == 1
    assert message in out.stderr, out.stderr


@pytest.mark.parametrize("content, message, command", [
    (b"garbage", "bad magic", ["verify"]), (b"", "truncated", ["inspect"]),
    (None, "no such file", ["run", "-i", "x.npy"]),
])
def test_bad_files_are_refused(work, content, message, command):
    path = work / "bad.rvm"
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(content)
    out = rvm(command[0], "bad.rvm", *command[1:], cwd=work)
    assert out.returncode == 1 and message in out.stderr, out.stderr


def test_inspect_and_verify(work):
    out = rvm("inspect", "model.rvm", "--disasm", cwd=work)
    assert out.returncode == 0, out.stderr
    assert "main(x)" in out.stdout
    assert "c_kernels (regenerated from TensorIR): add_one" in out.stdout
    assert "call " in out.stdout  # the disassembly
    ok = rvm("verify", "model.rvm", cwd=work)
    assert ok.returncode == 0 and "model.rvm: OK" in ok.stdout


def test_profile_and_bench(work):
    prof = rvm("profile", "model.rvm", "-i", "x.npy", cwd=work)
    assert prof.returncode == 0 and "add_one" in prof.stdout, prof.stderr
    (work / "ref.py").write_text("def reference(x):\n    return x + 1\n")
    bench = rvm("bench", "model.rvm", "-i", "x.npy", "--repeat", "5", "--engine", "both",
                "--reference", "ref.py", cwd=work)
    assert bench.returncode == 0, bench.stderr
    lines = bench.stdout.splitlines()
    assert "x reference" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == ["rvm", "rvm", "reference"]


def test_build_errors(work):
    (work / "two.py").write_text(MODEL + "\nOther = Module\nthird = 1\n")
    out = rvm("build", "two.py", cwd=work)
    assert out.returncode == 1 and "defines 2 IRModules (Module, Other)" in out.stderr
    named = rvm("build", "two.py", "--module", "Other", "-o", "other.rvm", cwd=work)
    assert named.returncode == 0, named.stderr
    assert rvm("build", "model.onnx", cwd=work).returncode == 1
    (work / "broken.py").write_text("raise RuntimeError('boom')\n")
    broken = rvm("build", "broken.py", cwd=work)
    assert broken.returncode == 1 and "RuntimeError: boom" in broken.stderr


@pytest.mark.parametrize("command", ["run", "bench"])
def test_help(work, command):
    out = rvm(command, "--help", cwd=work)
    assert out.returncode == 0 and out.stdout.startswith("usage: rvm " + command)
    assert "--trust-native" in out.stdout and "--input" in out.stdout


def test_usage_errors_exit_2(work):
    out = rvm("frobnicate", cwd=work)
    assert out.returncode == 2 and "invalid choice: 'frobnicate'" in out.stderr


ENV_MODEL = MODEL.replace(
    'y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), "float32"))',
    'y = R.call_dps_packed("test.cli.double", (x,), R.Tensor((n,), "float32"))')


def test_environment_functions_come_from_env_files(work):
    (work / "env_model.py").write_text(ENV_MODEL)
    (work / "env.py").write_text(
        "import numpy as np, rvm\n"
        "@rvm.register_func('test.cli.double', override=True)\n"
        "def double(x, out):\n"
        "    np.multiply(np.from_dlpack(x), 2, out=np.from_dlpack(out))\n")
    assert rvm("build", "env_model.py", "-o", "env.rvm", cwd=work).returncode == 0
    missing = rvm("run", "env.rvm", "-i", "x.npy", cwd=work)
    assert missing.returncode == 1
    assert "'test.cli.double'" in missing.stderr and "--env FILE.py" in missing.stderr
    ok = rvm("run", "env.rvm", "-i", "x.npy", "--env", "env.py", cwd=work)
    assert ok.returncode == 0 and "[0. 2. 4. 6. 8.]" in ok.stdout, ok.stderr


def test_run_limits(work):
    out = rvm("run", "model.rvm", "-i", "x.npy", "--memory-limit", "8", cwd=work)
    assert out.returncode == 1 and "exceed the VM's memory_limit of 8 bytes" in out.stderr
    bad = rvm("run", "model.rvm", "-i", "x.npy", "--step-limit", "0", cwd=work)
    assert bad.returncode == 1 and "step_limit must be a positive number" in bad.stderr
    bad = rvm("run", "model.rvm", "-i", "x.npy", "--time-limit", "0", cwd=work)
    assert bad.returncode == 1 and "time_limit must be a positive number" in bad.stderr
    ok = rvm("run", "model.rvm", "-i", "x.npy", "--memory-limit", "4096", "--step-limit", "10",
             "--time-limit", "5", cwd=work)
    assert ok.returncode == 0 and "[1. 2. 3. 4. 5.]" in ok.stdout, ok.stderr


MLP = '''
from rvm.script import ir as I, relax as R

@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w: R.Tensor((32, 64), "float32"),
             b: R.Tensor((32,), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.add(R.matmul(x, R.permute_dims(w)), b))
            R.output(y)
        return y
'''


def test_tune_then_run_the_tuned_executable(work):
    (work / "mlp.py").write_text(MLP)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype("float32") for shape in ((8, 64), (32, 64), (32,))]
    for name, a in zip(("mx", "mw", "mb"), arrays):
        np.save(work / f"{name}.npy", a)
    out = rvm("tune", "mlp.py", "--work-dir", "tune_tmp", "--trials", "4", "--trials-per-iter",
              "2", "--strategy", "replay-trace", "--seed", "0", "--min-repeat-ms", "0",
              "-o", "tuned.rvm", cwd=work)
    assert out.returncode == 0, out.stderr
    assert "tuning 1 kernel(s) of mlp.py for 4 trials" in out.stderr
    assert "[tune] #0 fused_NT_matmul_add_relu" in out.stderr  # the progress bar
    assert "4/4 trials" in out.stderr and "Total trials: 4" in out.stderr
    assert (work / "tune_tmp" / "database_tuning_record.json").read_text().count("\n") >= 1
    assert "wrote tuned.rvm" in out.stdout
    ran = rvm("run", "tuned.rvm", "-i", "mx.npy", "-i", "mw.npy", "-i", "mb.npy", "-o",
              "my.npy", cwd=work)
    assert ran.returncode == 0, ran.stderr
    x, w, b = arrays
    np.testing.assert_allclose(np.load(work / "my.npy"), np.maximum(x @ w.T + b, 0),
                               rtol=1e-4, atol=1e-4)
    nothing = rvm("tune", "model.py", "--work-dir", "tune_sym", cwd=work)
    assert nothing.returncode == 1
    assert "skipped add_one" in nothing.stderr and "no kernel to tune" in nothing.stderr
    assert rvm("tune", "mlp.py", "-w", "t", "--trials", "0", cwd=work).returncode == 2
    helped = rvm("tune", "--help", cwd=work)
    assert helped.returncode == 0 and "--work-dir" in helped.stdout
