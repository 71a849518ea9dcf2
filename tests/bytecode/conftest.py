"""Fixtures of the bytecode tests."""
import pytest

from tests.bytecode.programs import build_rich_executable


@pytest.fixture
def rich_executable():
    return build_rich_executable()
