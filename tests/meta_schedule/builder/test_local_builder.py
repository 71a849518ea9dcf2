"""LocalBuilder: candidates lowered to C here and compiled by workers; failures are results."""
import pytest

from rvm.meta_schedule.builder import BuilderInput, BuilderResult, LocalBuilder
from rvm.support import env
from tests.meta_schedule import kernels


@pytest.fixture(scope="module")
def builder():
    b = LocalBuilder(max_workers=2)
    yield b
    b.close()


def test_builds_kernels_in_order(builder):
    results = builder.build([BuilderInput(kernels.Copy, "c"),
                             BuilderInput(kernels.Wrong, "llvm --num-cores=1")])
    assert all(r.error_msg is None for r in results)
    assert results[0].artifact_path != results[1].artifact_path
    assert results[0].functions == {"main": "rvm_kernel_main"}
    assert "rvm_kernel_main" in results[0].source


def test_a_kernel_the_codegen_rejects_is_a_failed_result(builder):
    (result,) = builder.build([BuilderInput(kernels.Unrenderable, "c")])
    assert result.artifact_path is None
    assert "lowering failed" in result.error_msg and "float32x4" in result.error_msg


def test_a_compile_past_the_time_limit_fails(tmp_path):
    # A compiler that hangs on every source file (probes read stdin and pass through).
    fake = tmp_path / "slow-cc"
    fake.write_text('#!/bin/sh\n'
                    'if [ "$1" = --version ]; then echo "slow-cc 1.0"; exit 0; fi\n'
                    'for a; do last=$a; done\n'
                    'case "$last" in *.c) sleep 60;; esac\n'
                    f'exec {env.c_compiler()} "$@"\n')
    fake.chmod(0o755)
    slow = LocalBuilder(max_workers=1, timeout_sec=1, cc=str(fake))
    try:
        (result,) = slow.build([BuilderInput(kernels.Wrong, "c")])
    finally:
        slow.close()
    assert result.error_msg == "build failed: timed out after 1 s"
    # an over-unrolled candidate fails after seconds, not half a minute, by default
    assert LocalBuilder().timeout_sec <= 10


def test_non_c_target_is_rejected(builder):
    (result,) = builder.build([BuilderInput(kernels.Copy, "python")])
    assert "cannot tune for target python" in result.error_msg


def test_result_has_one_outcome():
    with pytest.raises(ValueError, match="either"):
        BuilderResult()
