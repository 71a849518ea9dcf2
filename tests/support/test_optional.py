"""Optional packages: a missing one is an ImportError naming the feature and the extra."""
import sys

import pytest

from rvm.distributed import map_batches
from rvm.distributed import RayRunner
from rvm.support.optional import import_optional


def test_a_present_module_is_imported():
    assert import_optional("math", "dev", "this test").sqrt(9.0) == 3.0


def test_without_ray_the_ray_features_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    with pytest.raises(ImportError, match=r"RayRunner needs the optional package 'ray'.*"
                                          r"pip install 'rvm\[distributed\]'"):
        RayRunner().run([])
    with pytest.raises(ImportError, match=r"map_batches needs the optional package 'ray'"):
        map_batches(b"", None)
