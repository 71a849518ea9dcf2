"""Every VM test runs on both engines."""
from tests.vm.engines import parametrize_engines, vm_engine  # noqa: F401  (the fixture)


def pytest_generate_tests(metafunc):
    parametrize_engines(metafunc)
