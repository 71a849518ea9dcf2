"""rvm.testing: TVM's test helpers under the same names."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rvm
import rvm.testing

# A parameter fixture, named by the attribute it is assigned to, as in TVM's tests.
dtype = rvm.testing.parameter("float32", "float64")


def test_parameter_fixture_takes_each_value(dtype):
    assert dtype in ("float32", "float64")


@rvm.testing.fixture
def doubled(dtype):
    return dtype * 2


def test_fixture_sees_parameters(doubled):
    assert doubled in ("float32float32", "float64float64")


def test_assert_allclose_accepts_ndarrays():
    a = rvm.nd.array(np.array([1.0, 2.0], "float32"))
    rvm.testing.assert_allclose(a, np.array([1.0, 2.0]))
    rvm.testing.assert_allclose(a, a, rtol=1e-5, atol=1e-5)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        rvm.testing.assert_allclose(a, np.array([1.0, 2.5]))
    with pytest.raises(AssertionError, match="shape mismatch"):
        rvm.testing.assert_allclose(a, np.array([1.0]))


def test_main_runs_the_calling_file(tmp_path):
    test_file = tmp_path / "test_small.py"
    test_file.write_text(textwrap.dedent('''
        import rvm.testing

        def test_ok():
            assert 1 + 1 == 2

        if __name__ == "__main__":
            rvm.testing.main()
    '''))
    done = subprocess.run([sys.executable, str(test_file), "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
