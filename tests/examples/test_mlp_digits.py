"""The main job of the README runs end to end (training, build, VM, export, reload, tuning
with a budget kept in a work dir, tuned kernels swapped in), and its two functions agree."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mlp_digits.py"
# The example imports the rvm of this tree, not whichever one is installed.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


@pytest.mark.slow
def test_mlp_digits_example_runs(tmp_path):
    pytest.importorskip("sklearn")
    work_dir = tmp_path / "tuning"
    # two trials per kernel: each is built and measured, so a search of two shows the same
    # records and reuse as a longer one (the example's default budget is 12)
    command = [sys.executable, str(EXAMPLE), "--work-dir", str(work_dir), "--trials", "2"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=ENV)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rvm VM test accuracy" in out.stdout
    assert "reloaded: identical results" in out.stdout
    assert "same predictions" in out.stdout
    assert "default/numpy" in out.stdout and "tuned/numpy" in out.stdout
    assert "batch 450" in out.stdout
    records = (work_dir / "database_tuning_record.json").read_text()
    # 2 trials of each of 4 kernels (and lines adding times of each one's best, measured
    # again at the end of the run)
    assert len([r for r in records.splitlines() if '"remeasured":true' not in r]) == 2 * 4
    # A second run finds the records: nothing is measured again.
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                           env=ENV)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work_dir / "database_tuning_record.json").read_text() == records


def test_main_env_relu_computes_main_without_a_copy_of_its_kernel():
    """The example writes one TensorIR kernel per linear layer: ``main_env_relu``, which
    needs the first layer without the ReLU that ``linear0`` applies, writes it as Relax
    operators, and computes ``main``'s logits (and numpy's) through ``env.relu``."""
    from examples.mlp_digits import DigitsMLP, bind_weights, numpy_forward
    import rvm
    from rvm import relax
    from rvm.tir import PrimFunc

    kernels = [gv.name_hint for gv, f in DigitsMLP.functions.items() if isinstance(f, PrimFunc)]
    assert sorted(kernels) == ["linear0", "linear1"]
    rng = np.random.default_rng(0)
    params = {"w0": rng.standard_normal((128, 64)), "b0": rng.standard_normal(128),
              "w1": rng.standard_normal((10, 128)), "b1": rng.standard_normal(10)}
    params = {k: v.astype("float32") for k, v in params.items()}
    vm = relax.VirtualMachine(relax.build(bind_weights(params), target="c"), rvm.cpu())
    x = rng.random((3, 64), dtype="float32")
    logits = vm["main"](x).numpy()
    np.testing.assert_allclose(logits, numpy_forward(params, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vm["main_env_relu"](x).numpy(), logits, rtol=1e-5, atol=1e-5)
