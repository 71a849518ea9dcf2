import pytest

from tests.runtime.ext_lib import load_ext_library


@pytest.fixture(scope="session")
def ext_library(tmp_path_factory):
    """The example C library, compiled once and loaded into the registry."""
    return load_ext_library(tmp_path_factory.mktemp("ext"))
