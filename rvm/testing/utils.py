"""Test helpers with TVM's names: compare tensors, run a test file, declare parameters.

>>> import numpy as np
>>> from rvm.runtime.ndarray import array
>>> assert_allclose(array(np.ones(3, "float32")), np.ones(3), rtol=1e-6)
"""
import inspect
import sys

import numpy as np

from rvm.runtime.ndarray import NDArray


def _as_numpy(value):
    return value.numpy() if isinstance(value, NDArray) else np.asarray(value)


def assert_allclose(actual, desired, rtol=1e-7, atol=0, verbose=True):
    """``numpy.testing.assert_allclose`` for NDArrays too; the shapes must match exactly (no
    broadcasting), as in TVM."""
    actual, desired = _as_numpy(actual), _as_numpy(desired)
    if actual.shape != desired.shape:
        raise AssertionError(f"shape mismatch: actual {actual.shape}, desired {desired.shape}")
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def main():
    """Runs pytest on the calling file (``if __name__ == "__main__": rvm.testing.main()``) with
    the command line's extra arguments, and exits with its status."""
    import pytest

    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


def parameter(*values, ids=None):
    """A pytest fixture taking each of ``values`` in turn; the module attribute it is assigned
    to names it (``dtype = rvm.testing.parameter("float32", "float16")``)."""
    import pytest

    def value(request):
        """The current parameter value."""
        return request.param

    return pytest.fixture(params=values, ids=ids)(value)


def fixture(func=None, *, cache_return_value=False):
    """``pytest.fixture`` under TVM's name; ``cache_return_value=True`` computes the value once
    per session."""
    import pytest

    scope = "session" if cache_return_value else "function"
    if func is None:
        return pytest.fixture(scope=scope)
    return pytest.fixture(scope=scope)(func)
