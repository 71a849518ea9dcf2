"""The C compiler driver: caching, fingerprints, OpenMP probe and error reports."""
import pytest

from rvm.runtime.compiler import CompileError, Compiler, CompilerNotFoundError, default_compiler

SOURCE = "int rvm_test_answer(void) { return 42; }\n"


@pytest.fixture
def compiler(tmp_path):
    return Compiler(cache_dir=tmp_path)


def test_compile_then_cache_hit(compiler):
    first = compiler.compile(SOURCE)
    assert not first.from_cache and first.path.is_file()
    assert compiler.invocations == 1
    second = compiler.compile(SOURCE)
    assert second.from_cache and second.path == first.path
    assert compiler.invocations == 1


def test_cache_is_shared_between_compiler_objects(tmp_path):
    Compiler(cache_dir=tmp_path).compile(SOURCE)
    other = Compiler(cache_dir=tmp_path)
    assert other.lookup(SOURCE) is not None
    assert other.compile(SOURCE).from_cache
    assert other.invocations == 0


def test_key_depends_on_source_and_flags(compiler):
    a = compiler.cache_key(SOURCE, compiler.flags())
    assert a != compiler.cache_key(SOURCE + "\n", compiler.flags())
    assert a != compiler.cache_key(SOURCE, compiler.flags() + ["-DX"])
    assert compiler.lookup(SOURCE + "// changed\n") is None


def test_fingerprint_names_compiler_and_target(compiler):
    fingerprint = compiler.fingerprint
    assert "|" in fingerprint and len(fingerprint) > 10


def test_openmp_probe_is_a_bool_and_cached(tmp_path):
    first = Compiler(cache_dir=tmp_path)
    assert isinstance(first.openmp, bool)
    second = Compiler(cache_dir=tmp_path)
    assert second.openmp == first.openmp
    assert second.invocations == 0


def test_compile_error_shows_offending_lines(compiler):
    source = "int ok(void) { return 1; }\nint broken(void) { return undefined_name; }\nint x;\n"
    with pytest.raises(CompileError) as info:
        compiler.compile(source)
    message = str(info.value)
    assert "line 2" in message
    assert ">    2 | int broken(void) { return undefined_name; }" in message
    assert "undefined_name" in info.value.diagnostics
    assert compiler.lookup(source) is None


def test_missing_compiler_is_reported(tmp_path):
    with pytest.raises(CompilerNotFoundError, match="no-such-cc"):
        Compiler(cc="no-such-cc-rvm", cache_dir=tmp_path).compile(SOURCE)


def test_default_compiler_uses_session_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("RVM_CACHE_DIR", str(tmp_path))
    compiler = default_compiler()
    assert compiler is default_compiler()
    assert str(compiler.cache.root).startswith(str(tmp_path))


def test_wide_vectors_follow_the_host(compiler):
    assert compiler.wide_vectors == ("-mavx512f" in compiler.fingerprint.split())
    assert ("-mprefer-vector-width=512" in compiler.flags()) == compiler.wide_vectors


def test_sqrt_is_an_instruction_not_a_libm_call(compiler):
    """-fno-math-errno: sqrtf need not set errno, so it compiles to the CPU's square root
    and a loop of it vectorizes (batch norm's and layer norm's rsqrt in a fused epilogue);
    with errno it is a call to libm's sqrtf for negative inputs."""
    source = ("#include <math.h>\n"
              "void rvm_test_sqrt(float* restrict a, long n) {\n"
              "#pragma omp simd\n"
              "  for (long i = 0; i < n; ++i) a[i] = 1.0f / sqrtf(a[i] + 1e-5f);\n}\n")
    library = compiler.compile(source).path.read_bytes()
    assert b"rvm_test_sqrt" in library and b"sqrtf" not in library
