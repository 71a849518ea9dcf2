"""Session-wide test configuration.

Compiled kernels go to a cache directory private to the test session, so
tests never read or pollute the user's cache, and a kernel compiled by one
test is a cache hit for the next. Tests that run on Ray share one local
cluster (the ``ray_cluster`` fixture) and run last.
"""
import os
import shutil
import tempfile

import pytest

_SESSION_CACHE = {}


def pytest_configure(config):
    path = tempfile.mkdtemp(prefix="rvm-test-cache-")
    _SESSION_CACHE["previous"] = os.environ.get("RVM_CACHE_DIR")
    _SESSION_CACHE["path"] = path
    os.environ["RVM_CACHE_DIR"] = path


def pytest_unconfigure(config):
    path = _SESSION_CACHE.pop("path", None)
    previous = _SESSION_CACHE.pop("previous", None)
    if previous is None:
        os.environ.pop("RVM_CACHE_DIR", None)
    else:
        os.environ["RVM_CACHE_DIR"] = previous
    if path:
        shutil.rmtree(path, ignore_errors=True)


def pytest_collection_modifyitems(session, config, items):
    """Tests on Ray run last: the cluster's processes then never share the machine with
    the other tests (some of which time their workers)."""
    items.sort(key=lambda item: "ray_cluster" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster of two CPUs for the whole session (started on first use, shut
    down at the end); skips the test when ray is not installed."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield ray
    ray.shutdown()
