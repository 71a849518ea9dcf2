"""The object check of untrusted compiles: constructors, destructors and code added to
``.init`` beyond a minimal library's are refused, as are an executable stack, missing RELRO
and lazy binding; honest kernels pass."""
import subprocess

import pytest

import rvm
from rvm import relax
from rvm.runtime import compiler as compiler_mod, csource_module, kernel_library
from rvm.runtime.compiler import Compiler
from rvm.runtime.elf_check import (ElfFormatError, UnsafeObjectError, check_object,
                                   object_report)
from tests.e2e.test_safe_loading import AddOne
from tests.security.attack import with_kernels

CANARY_BODY = '{ FILE* f = fopen("%s", "w"); if (f) { fputs("ran", f); fclose(f); } }'
# Ways C code gets a function run at load or unload time, none of them spelled
# "__attribute__((constructor))" except the first.
RUNS_AT_LOAD = {
    "constructor_attribute": "__attribute__((constructor)) static void f(void) %s\n",
    "destructor_attribute": "__attribute__((destructor)) static void f(void) %s\n",
    "init_array_section": "static void f(void) %s\n__attribute__((section(\".init_array\"), "
                          "used)) static void (*const p)(void) = f;\n",
    "init_array_priority": "static void f(void) %s\n__attribute__((section("
                           "\".init_array.00100\"), used)) static void (*const p)(void) = f;\n",
    "fini_array_section": "static void f(void) %s\n__attribute__((section(\".fini_array\"), "
                          "used)) static void (*const p)(void) = f;\n",
    "ifunc_resolver": "static int impl(void) { return 1; }\nstatic void canary(void) %s\n"
                      "static void* resolve(void) { canary(); return (void*)impl; }\n"
                      "int rvm_answer(void) __attribute__((ifunc(\"resolve\")));\n",
    "hidden_ifunc": "static int impl(void) { return 1; }\nstatic void canary(void) %s\n"
                    "static void* resolve(void) { canary(); return (void*)impl; }\n"
                    "static int answer(void) __attribute__((ifunc(\"resolve\")));\n"
                    "int rvm_use(void) { return answer(); }\n",
    "init_code": "void rvm_f(void) %s\n__asm__(\".section .init\\n call rvm_f@PLT\\n "
                 ".previous\");\n",
}


@pytest.fixture
def cc(tmp_path):
    return Compiler(cache_dir=tmp_path / "cache")


def _source(kind, canary):
    return "#include <stdio.h>\n" + RUNS_AT_LOAD[kind] % (CANARY_BODY % canary)


@pytest.mark.parametrize("kind", sorted(RUNS_AT_LOAD))
def test_code_run_at_load_is_refused(cc, tmp_path, kind):
    with pytest.raises(UnsafeObjectError, match="code run at load or exit: .* holds"):
        cc.compile(_source(kind, tmp_path / "canary"), untrusted=True)
    assert not (tmp_path / "canary").exists()


def test_a_trusted_compile_in_the_cache_is_checked_on_an_untrusted_hit(cc, tmp_path):
    source = _source("init_array_section", tmp_path / "canary")
    assert cc.compile(source, use_openmp=False).from_cache is False  # rvm's own: unchecked
    with pytest.raises(UnsafeObjectError, match=r"\.init_array holds 16 bytes"):
        cc.compile(source, use_openmp=False, untrusted=True)


def test_trust_native_c_with_a_section_constructor_is_refused_and_never_runs(
        tmp_path, monkeypatch, cc):
    for module in (compiler_mod, kernel_library, csource_module):
        monkeypatch.setattr(module, "default_compiler", lambda: cc)
    path = tmp_path / "add_one.rvm"
    relax.build(AddOne, target="c").export_library(str(path))
    canary = tmp_path / "canary"
    hostile = tmp_path / "hostile.rvm"
    hostile.write_bytes(with_kernels(path.read_bytes(), tir=b"",
                                     source=_source("init_array_section", canary)))
    with pytest.raises(Exception, match="code run at load or exit: .init_array holds"):
        rvm.runtime.load_module(str(hostile), trust_native=True)
    assert not canary.exists()


def _link(tmp_path, *flags):
    src = tmp_path / "plain.c"
    src.write_text("int rvm_answer(void) { return 42; }\n")
    out = tmp_path / "plain.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(out), str(src), *flags], check=True)
    return out.read_bytes()


def test_stack_relro_and_binding_are_checked(tmp_path):
    hardened = ("-Wl,-z,relro,-z,now", "-Wl,-z,noexecstack")
    empty = object_report(_link(tmp_path, *hardened))
    report = check_object(_link(tmp_path, *hardened), empty)
    assert report.relro and report.bind_now and not report.exec_stack
    with pytest.raises(UnsafeObjectError, match="executable stack"):
        check_object(_link(tmp_path, "-Wl,-z,relro,-z,now", "-Wl,-z,execstack"), empty)
    with pytest.raises(UnsafeObjectError, match="PT_GNU_RELRO"):
        check_object(_link(tmp_path, "-Wl,-z,norelro", "-Wl,-z,now"), empty)
    with pytest.raises(UnsafeObjectError, match="BIND_NOW"):
        check_object(_link(tmp_path, "-Wl,-z,relro,-z,lazy", "-Wl,-z,noexecstack"), empty)


def test_damaged_objects_are_refused_with_a_reason(tmp_path):
    data = _link(tmp_path)
    with pytest.raises(ElfFormatError, match="expected an ELF file"):
        object_report(b"MZ" + data[2:])
    with pytest.raises(ElfFormatError, match="past the end of the file"):
        object_report(data[:200])


def test_honest_kernels_pass(cc):
    lib = cc.compile("int rvm_answer(void) { return 42; }", untrusted=True)
    report = object_report(lib.path.read_bytes())
    assert report.relro and report.bind_now and not report.exec_stack


def test_instrumented_kernels_pass(tmp_path):
    """AddressSanitizer gives a translation unit with globals a constructor and a destructor:
    the minimal library compiled with the same flags has them too, so they are allowed."""
    wrapper = tmp_path / "asan-cc"
    wrapper.write_text('#!/bin/sh\nexec cc -fsanitize=address "$@"\n')
    wrapper.chmod(0o755)
    cc = Compiler(cc=str(wrapper), cache_dir=tmp_path / "cache")
    source = ('static const char* names[] = {"a", "b"};\n'
              'const char* rvm_name(int i) { return names[i & 1]; }\n')
    report = object_report(cc.compile(source, untrusted=True).path.read_bytes())
    plain = Compiler(cache_dir=tmp_path / "plain").compile(source)
    assert report.init[".init_array"] > object_report(plain.path.read_bytes()).init[".init_array"]
    with pytest.raises(UnsafeObjectError, match="code run at load or exit"):
        cc.compile(source + "__attribute__((constructor)) static void f(void) { names[0] = 0; }\n",
                   untrusted=True)
