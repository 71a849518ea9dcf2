"""The end-to-end tests that run programs on the VM do so on both engines."""
from tests.vm.engines import parametrize_engines, vm_engine  # noqa: F401  (the fixture)

VM_MODULES = ("test_spec_4", "test_spec_5", "test_spec_6", "test_relax_", "test_vm_roundtrip",
              "test_load_module", "test_seed_002")


def pytest_generate_tests(metafunc):
    parametrize_engines(metafunc, VM_MODULES)
