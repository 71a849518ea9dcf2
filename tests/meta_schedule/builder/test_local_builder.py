"""LocalBuilder: candidates lowered to C here and compiled by workers; failures are results."""
import time

import pytest

from rvm.meta_schedule.builder import BuilderInput, BuilderResult, LocalBuilder
from rvm.meta_schedule.builder.local_builder import compile_weight
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


def _fake_cc(tmp_path, name, on_marker):
    """A C compiler that logs every kernel it compiles to ``<name>.log`` (a line each: the
    number of unrolled loops in it) and runs ``on_marker`` (shell) for a source holding
    ``+ 1.0f`` (kernels.Wrong's), then the real compiler (probes pass through)."""
    fake = tmp_path / name
    log = tmp_path / f"{name}.log"
    fake.write_text('#!/bin/sh\n'
                    f'if [ "$1" = --version ]; then echo "{name} 1.0"; exit 0; fi\n'
                    'for a; do last=$a; done\n'
                    'case "$last" in *.c)\n'
                    f'  if grep -q rvm_kernel_main "$last"; then\n'
                    f'    grep -c "GCC unroll" "$last" >> {log}; fi\n'
                    f'  if grep -q "+ 1.0f" "$last"; then {on_marker}; fi;;\n'
                    'esac\n'
                    f'exec {env.c_compiler()} "$@"\n')
    fake.chmod(0o755)
    return str(fake), log


def _compiled(log):
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_source_is_compiled_once(tmp_path, monkeypatch):
    monkeypatch.setenv("RVM_CACHE_DIR", str(tmp_path / "cache"))
    cc, log = _fake_cc(tmp_path, "logging-cc", "true")
    builder = LocalBuilder(max_workers=2, cc=cc)
    try:
        batch = [BuilderInput(kernels.Copy, "c"), BuilderInput(kernels.Wrong, "c"),
                 BuilderInput(kernels.Copy, "c")]
        first = builder.build(batch)
        assert all(r.error_msg is None for r in first)
        # the two copies render alike: one compile, one library
        assert first[0].artifact_path == first[2].artifact_path != first[1].artifact_path
        assert _compiled(log) == 2
        # built again: found in the kernel cache, the compiler not run
        again = builder.build(batch)
        assert [r.artifact_path for r in again] == [r.artifact_path for r in first]
        assert _compiled(log) == 2
    finally:
        builder.close()


def test_submit_returns_while_the_workers_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("RVM_CACHE_DIR", str(tmp_path / "cache"))
    cc, _ = _fake_cc(tmp_path, "sleepy-cc", "sleep 3")
    builder = LocalBuilder(max_workers=1, cc=cc)
    try:
        future = builder.submit([BuilderInput(kernels.Wrong, "c")])
        assert not future.done()
        (result,) = future.result()
        assert future.done() and result.error_msg is None
    finally:
        builder.close()


def test_a_failed_or_hung_compile_fails_its_candidate_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("RVM_CACHE_DIR", str(tmp_path / "cache"))
    batch = [BuilderInput(kernels.Copy, "c"), BuilderInput(kernels.Wrong, "c"),
             BuilderInput(kernels.Copy, "llvm --num-cores=1")]
    cc, _ = _fake_cc(tmp_path, "failing-cc", "echo 'x.c:1:1: error: boom' >&2; exit 1")
    builder = LocalBuilder(max_workers=2, cc=cc)
    try:
        copy, wrong, other = builder.build(batch)
    finally:
        builder.close()
    assert copy.error_msg is None and other.error_msg is None
    assert wrong.error_msg.startswith("build failed:") and "boom" in wrong.error_msg
    cc, _ = _fake_cc(tmp_path, "hanging-cc", "sleep 60")
    builder = LocalBuilder(max_workers=2, timeout_sec=60, cc=cc)
    try:
        # (the compiler's probes first, with time to spare on a loaded machine)
        assert all(r.error_msg is None for r in builder.build([batch[0], batch[2]]))
        builder.timeout_sec = 2
        start = time.perf_counter()
        copy, wrong, other = builder.build(batch)
        elapsed = time.perf_counter() - start
    finally:
        builder.close()
    assert copy.error_msg is None and other.error_msg is None
    assert wrong.error_msg == "build failed: timed out after 2 s"
    assert elapsed < 30  # the hung compiler was killed, not awaited


def test_the_heaviest_source_compiles_first(tmp_path, monkeypatch):
    monkeypatch.setenv("RVM_CACHE_DIR", str(tmp_path / "cache"))
    cc, log = _fake_cc(tmp_path, "ordered-cc", "true")
    builder = LocalBuilder(max_workers=1, cc=cc)
    try:
        copy, unrolled = builder.build([BuilderInput(kernels.Copy, "c"),
                                        BuilderInput(kernels.UnrolledCopy, "c")])
    finally:
        builder.close()
    assert compile_weight(unrolled.source) == 16 and compile_weight(copy.source) == 0
    # one worker: the log's order is the compile order; results keep the inputs' order
    assert log.read_text().split() == ["1", "0"]
    assert "#pragma GCC unroll 16" in unrolled.source
