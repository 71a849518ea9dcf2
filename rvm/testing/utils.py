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


def parameter(*values, ids=None, by_dict=None):
    """A pytest fixture taking each of ``values`` in turn; the module attribute it is assigned
    to names it (``dtype = rvm.testing.parameter("float32", "float16")``). ``by_dict`` gives
    the values as a dict whose keys are the test ids, as TVM's does."""
    import pytest

    if by_dict is not None:
        if values or ids is not None:
            raise TypeError("parameter() takes either values (and ids) or by_dict, not both")
        ids, values = list(by_dict.keys()), tuple(by_dict.values())

    def value(request):
        """The current parameter value."""
        return request.param

    return pytest.fixture(params=values, ids=ids)(value)


def parameters(*value_sets, ids=None):
    """Fixtures that vary together, one per position of the tuples in ``value_sets``:
    ``op, dtype = rvm.testing.parameters((add, "float32"), (sub, "int32"))`` runs a test
    that uses ``op`` (or ``dtype``, or both) once per tuple, as TVM's does.

    The fixtures share a parametrized fixture placed in the calling module, so a test using
    any of them is run once per tuple, and one using several sees the values of one tuple."""
    import pytest

    if not value_sets:
        raise TypeError("parameters() needs at least one tuple of values")
    width = len(value_sets[0])
    for i, value_set in enumerate(value_sets):
        if not isinstance(value_set, (tuple, list)) or len(value_set) != width:
            raise ValueError(f"parameters(): every value set must be a tuple of {width} "
                             f"values; value set {i} is {value_set!r}")
    caller = sys._getframe(1).f_globals
    shared = f"_rvm_parameters_{sum(k.startswith('_rvm_parameters_') for k in caller)}"

    def index(request):
        """The position in ``value_sets`` of the current tuple."""
        return request.param

    caller[shared] = pytest.fixture(params=range(len(value_sets)), ids=ids, name=shared)(index)

    def make(position):
        def value(**kwargs):
            return value_sets[kwargs[shared]][position]

        value.__signature__ = inspect.Signature(
            [inspect.Parameter(shared, inspect.Parameter.KEYWORD_ONLY)])
        return pytest.fixture(value)

    return tuple(make(position) for position in range(width))


def requires_llvm(func):
    """TVM's marker of a test that needs the LLVM target. rvm builds target "llvm" through the
    C compiler, so the test runs as it is."""
    return func


def requires_gpu(func):
    """TVM's marker of a test that needs a GPU: skipped, rvm runs on the CPU only."""
    import pytest

    return pytest.mark.skip(reason="rvm runs on the CPU only (no GPU target)")(func)


def fixture(func=None, *, cache_return_value=False):
    """``pytest.fixture`` under TVM's name; ``cache_return_value=True`` computes the value once
    per session."""
    import pytest

    scope = "session" if cache_return_value else "function"
    if func is None:
        return pytest.fixture(scope=scope)
    return pytest.fixture(scope=scope)(func)
