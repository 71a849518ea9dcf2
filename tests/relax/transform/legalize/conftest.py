"""Each test module here lists its operator ``CASES``; tests taking ``case`` run once per case,
and ``vm`` is the module's cases built together, for the c target and for the python
reference target."""
import pytest

from tests.relax.transform.legalize.harness import build_family


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        cases = metafunc.module.CASES
        metafunc.parametrize("case", cases, ids=[c.name for c in cases])


@pytest.fixture(scope="module", params=["c", "python"])
def vm(request):
    return build_family(request.module.CASES, target=request.param)
