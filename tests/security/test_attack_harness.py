"""The attack harness itself: an honest file re-serialized through it runs on both engines,
and a damaged one is reported as a load error, not a crash."""
import numpy as np
import pytest

from rvm import relax
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import ENGINES, kernel_tir, run_untrusted, with_kernels


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("harness") / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    return path.read_bytes()


@pytest.mark.parametrize("engine", ENGINES)
def test_an_honest_file_through_the_harness_runs(saved, tmp_path, engine):
    path = tmp_path / "same.rvm"
    path.write_bytes(with_kernels(saved, funcs=kernel_tir(saved)))
    result = run_untrusted(path, [np.arange(8, dtype="float32")], engine=engine)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RAN [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]" in result.stdout


def test_damaged_tir_is_reported_as_a_load_error(saved, tmp_path):
    path = tmp_path / "bad.rvm"
    path.write_bytes(with_kernels(saved, tir=b"\x93garbage"))
    result = run_untrusted(path, [np.arange(8, dtype="float32")])
    assert result.returncode == 3 and "LOAD-ERROR" in result.stdout, result.stdout
