import pytest

from rvm.relax.block_builder import BlockBuilder


@pytest.fixture
def infer():
    """Normalizes a call outside any function and returns its struct info."""
    bb = BlockBuilder()

    def run(call):
        return bb.normalize(call).struct_info

    return run

