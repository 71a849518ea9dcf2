"""The engine fixture: VM tests run once per engine.

``vm_engine`` sets the engine a ``VirtualMachine`` built without ``engine=``
uses (``rvm.vm.machine.DEFAULT_ENGINE``) for a whole test module.
"""
import pytest

from rvm.vm import machine

ENGINES = ("python", "native")


@pytest.fixture(autouse=True, scope="module")
def vm_engine(request):
    engine = getattr(request, "param", None)
    if engine is None:
        yield machine.DEFAULT_ENGINE
        return
    previous = machine.DEFAULT_ENGINE
    machine.DEFAULT_ENGINE = engine
    try:
        yield engine
    finally:
        machine.DEFAULT_ENGINE = previous


def parametrize_engines(metafunc, module_patterns=None, skip=()):
    """Runs the test once per engine if its module matches one of ``module_patterns`` (None:
    any) and is not in ``skip``."""
    if "vm_engine" not in metafunc.fixturenames:
        return
    name = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module_patterns is not None and not any(name.startswith(p) for p in module_patterns):
        return
    if name in skip:
        return
    metafunc.parametrize("vm_engine", ENGINES, indirect=True, scope="module")
