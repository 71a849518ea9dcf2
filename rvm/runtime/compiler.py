"""The C compiler driver: C source -> shared object, cached on disk.

A compiled library is stored under the cache directory, keyed by a hash of the
source, the flags, the compiler's fingerprint (its version, target and what
``-march=native`` means on this machine) and ``FORMAT_VERSION``; compiling the
same source again is a file lookup. Compile errors raise ``CompileError``
with the compiler's diagnostics and the offending source lines.

Kernels compile with ``-fwrapv`` (signed arithmetic wraps, so the compiler
cannot delete half of a bounds guard by assuming it never overflows), a
stack protector, a non-executable stack and full RELRO with immediate
binding. Untrusted sources (regenerated kernels, C from a file) compile
under ``CompileLimits`` (address space, CPU time, source size, wall time),
and their object is checked by ``rvm.runtime.elf_check`` before it is used.

>>> import tempfile
>>> cc = Compiler(cache_dir=tempfile.mkdtemp())
>>> lib = cc.compile("int answer(void) { return 42; }")
>>> lib.path.suffix, lib.from_cache
('.so', False)
>>> cc.compile("int answer(void) { return 42; }").from_cache
True
>>> cc.limits = CompileLimits(source_bytes=16)
>>> try:
...     cc.compile("int answer(void) { return 7; }", untrusted=True)
... except CompileLimitError as err:
...     print(err)
C source of untrusted code has 30 bytes, more than the compile limit of 16; refusing to compile it
"""
import os
import pathlib
import re
import resource
import shutil
import signal
import subprocess
import threading

from rvm.runtime.elf_check import check_object, object_report
from rvm.support import env
from rvm.support.disk_cache import DiskCache, cache_key
from rvm.support.errors import RVMError

# Bump when the meaning of a cached object changes (flags policy, ABI of generated code).
FORMAT_VERSION = 2

BASE_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-std=gnu11", "-fno-strict-aliasing",
              "-fwrapv", "-fno-math-errno", "-fstack-protector-strong", "-Wl,-z,relro,-z,now",
              "-Wl,-z,noexecstack")
# `#pragma omp simd` is honoured with -fopenmp-simd alone (no runtime library needed).
SIMD_FLAG = "-fopenmp-simd"
OPENMP_FLAG = "-fopenmp"
WIDE_VECTOR_FLAG = "-mprefer-vector-width=512"
# glibc's vector math library (libmvec; glibc >= 2.35 for tanhf and erff): with it linked and
# RVM_VECTOR_MATH defined, kernel sources (whose preamble holds VECTOR_MATH_DECLARATIONS)
# declare the `omp declare simd` forms of these functions, so a vectorized loop calls them on
# whole vectors instead of one lane at a time (glibc documents at most 4 ulp for them).
VECTOR_MATH_FLAGS = ("-DRVM_VECTOR_MATH", "-Wl,--no-as-needed", "-lmvec")
VECTOR_MATH_FUNCTIONS = ("expf", "logf", "tanhf", "erff", "powf")
_ARITY = {"powf": 2}
VECTOR_MATH_DECLARATIONS = "#ifdef RVM_VECTOR_MATH\n" + "".join(
    f"#pragma omp declare simd notinbranch\n"
    f"float {name}({', '.join(['float'] * _ARITY.get(name, 1))});\n"
    for name in VECTOR_MATH_FUNCTIONS) + "#endif\n"
# C++ sources (C-source modules of format "cc"): the C flags with C++'s standard, and the C++
# runtime library as a dependency of the object (a C program loading it may lack it).
LANGUAGES = ("c", "c++")
_CXX_FLAGS = ("-x", "c++", "-std=gnu++17", "-Wl,--no-as-needed", "-lstdc++")
_CONTEXT_LINES = 2
# Seconds of one compiler run on a trusted source (rvm's own kernels).
COMPILE_TIMEOUT = 600
# The library whose initializers untrusted objects are compared with: one function, one global.
_INIT_PROBE = ("static const char rvm_probe_text[] = \"rvm\";\n"
               "const char* rvm_probe(int i) { return rvm_probe_text + i; }\n")
_ERROR_LINE = re.compile(r"^(?P<file>[^:\s]+\.(?:c|cc)):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                         r"(?P<kind>(?:fatal )?error):\s*(?P<msg>.*)$")


class CompileError(RVMError):
    """The C compiler rejected a source; the message shows diagnostics and source lines."""

    def __init__(self, message, source="", diagnostics=""):
        super().__init__(message)
        self.source = source
        self.diagnostics = diagnostics


class CompileLimitError(CompileError):
    """The compiler of an untrusted source hit one of its CompileLimits."""


class CompileLimits:
    """Limits of one compiler run on an untrusted source: ``memory`` bytes of address space
    (RLIMIT_AS of the driver and of cc1), ``cpu_seconds`` of CPU time per process
    (RLIMIT_CPU), ``source_bytes`` of C source and ``seconds`` of wall time."""

    def __init__(self, memory=2 << 30, cpu_seconds=60, source_bytes=16 << 20, seconds=120):
        self.memory = memory
        self.cpu_seconds = cpu_seconds
        self.source_bytes = source_bytes
        self.seconds = seconds

    def apply(self):
        """Sets the limits on the calling process (run in the compiler's child process)."""
        resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 1))

    def check_source(self, source):
        """Raises CompileLimitError when ``source`` is larger than ``source_bytes``."""
        size = len(source.encode("utf-8"))
        if size > self.source_bytes:
            raise CompileLimitError(f"C source of untrusted code has {size} bytes, more than "
                                    f"the compile limit of {self.source_bytes}; refusing to "
                                    "compile it")

    def classify(self, result):
        """A CompileLimitError when the failed compiler run ``result`` hit a limit, else
        None."""
        text = result.stderr
        if re.search(r"out of memory|memory exhausted|cannot allocate memory|std::bad_alloc",
                     text, re.IGNORECASE):
            return CompileLimitError(f"C compilation of untrusted code exceeded its memory "
                                     f"limit of {self.memory >> 20} MiB of address space "
                                     f"({result.args[0]})")
        # SIGXCPU at the soft limit, SIGKILL one second later at the hard one.
        if re.search(r"CPU time limit exceeded|Killed signal", text) \
                or -result.returncode in (signal.SIGXCPU, signal.SIGKILL):
            return CompileLimitError(f"C compilation of untrusted code exceeded its CPU time "
                                     f"limit of {self.cpu_seconds} s ({result.args[0]})")
        return None


class CompilerNotFoundError(RVMError):
    """No working C compiler."""


class CompiledLibrary:
    """A shared object in the cache: ``path``, its cache ``key``, and whether it was a hit."""

    def __init__(self, path, key, from_cache):
        self.path = path
        self.key = key
        self.from_cache = from_cache

    def __repr__(self):
        return f"CompiledLibrary({str(self.path)!r}, from_cache={self.from_cache})"


def _run(argv, stdin_text=None, timeout=COMPILE_TIMEOUT, limits=None):
    """Runs the compiler (stdin empty unless given, so a source cannot read the terminal),
    under ``limits`` (CompileLimits) when given.

    The compiler runs in its own process group: on timeout the whole group is
    killed, since the driver's children (cc1) would outlive it, blocked forever.
    """
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                preexec_fn=limits.apply if limits is not None else None)
    except FileNotFoundError:
        raise CompilerNotFoundError(
            f"C compiler '{argv[0]}' not found; install one (gcc or clang) or set RVM_CC") from None
    try:
        out, err = proc.communicate(stdin_text if stdin_text is not None else "", timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise CompileLimitError(f"C compilation timed out after {timeout} s ({argv[0]})") \
            from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def own_diagnostics(diagnostics, source_path):
    """The compiler's lines about ``source_path`` itself: never the text of included files."""
    prefix = str(source_path) + ":"
    return "\n".join(line for line in diagnostics.splitlines() if line.startswith(prefix))


def _show_source_lines(source, line_numbers):
    """Numbered excerpts of ``source`` around each line, the line itself marked with '>'."""
    lines = source.splitlines()
    shown = set()
    for n in sorted(line_numbers):
        for i in range(max(1, n - _CONTEXT_LINES), min(len(lines), n + _CONTEXT_LINES) + 1):
            shown.add(i)
    out = []
    previous = None
    for i in sorted(shown):
        if previous is not None and i != previous + 1:
            out.append("     ...")
        marker = ">" if i in line_numbers else " "
        out.append(f"{marker}{i:5d} | {lines[i - 1]}")
        previous = i
    return "\n".join(out)


def format_compile_error(argv, source, diagnostics, source_name):
    """The CompileError message: the first error, the offending lines, then all diagnostics."""
    errors = []
    for line in diagnostics.splitlines():
        match = _ERROR_LINE.match(line.strip())
        if match and match.group("file").endswith(source_name):
            errors.append((int(match.group("line")), match.group("msg")))
    command = " ".join(argv[:1] + [a for a in argv[1:] if a.startswith("-")])
    head = f"C compilation failed ({command})"
    parts = [head + (f": line {errors[0][0]}: {errors[0][1]}" if errors else "")]
    if errors:
        parts.append("offending source lines:")
        parts.append(_show_source_lines(source, {n for n, _ in errors}))
    parts.append("compiler output:")
    parts.append(diagnostics.strip() or "(none)")
    return "\n".join(parts)


class Compiler:
    """A C compiler command with a disk cache of its outputs.

    ``cc`` defaults to $RVM_CC / $CC / ``cc`` and ``cache_dir`` to
    $RVM_CACHE_DIR or the user's cache directory (see rvm.support.env).
    ``invocations`` counts the compiler runs ``compile`` made (probes excluded);
    ``limits`` (CompileLimits) bound each compile of an untrusted source.
    """

    def __init__(self, cc=None, cache_dir=None, limits=None):
        self.cc = cc or env.c_compiler()
        self.limits = limits or CompileLimits()
        self._empty_reports = {}
        self.cache = DiskCache(cache_dir if cache_dir is not None else env.cache_dir(), "kernels")
        self.invocations = 0
        self._fingerprint = None
        self._openmp = None
        self._vector_math = None
        self._vector_bytes = {}
        self._lock = threading.Lock()

    @property
    def fingerprint(self):
        """A string identifying the compiler version, its target and the host's -march=native."""
        if self._fingerprint is None:
            version = _run([self.cc, "--version"])
            if version.returncode != 0:
                output = version.stderr.strip() or version.stdout.strip()
                raise CompilerNotFoundError(f"'{self.cc} --version' failed: {output}")
            target = _run([self.cc, "-dumpmachine"]).stdout.strip()
            # What -march=native expands to: the same source compiles differently per CPU.
            native = _run([self.cc, "-march=native", "-E", "-v", "-"], stdin_text="")
            cpu = " ".join(sorted(set(re.findall(r"-march=\S+|-mtune=\S+|-m(?:no-)?avx\S*",
                                                 native.stderr))))
            first = version.stdout.strip().splitlines()[0] if version.stdout.strip() else ""
            self._fingerprint = f"{first} | {target} | {cpu}"
        return self._fingerprint

    @property
    def openmp(self):
        """Whether ``-fopenmp`` compiles and links a parallel loop (probed once, cached)."""
        if self._openmp is None:
            key = cache_key("openmp-probe", self.cc, self.fingerprint, FORMAT_VERSION)
            hit = self.cache.get(key, ".probe")
            if hit is not None:
                self._openmp = hit.read_bytes() == b"1"
            else:
                probe = ("#include <omp.h>\nint rvm_probe(int n) {\n  int s = 0;\n"
                         "#pragma omp parallel for reduction(+:s)\n"
                         "  for (int i = 0; i < n; ++i) s += i;\n"
                         "  return s + omp_get_max_threads();\n}\n")
                ok = self._compile_uncached(probe, list(BASE_FLAGS) + [OPENMP_FLAG], check=False)
                self._openmp = ok is not None
                self.cache.put(key, ".probe", b"1" if self._openmp else b"0")
        return self._openmp

    @property
    def vector_math(self):
        """Whether a loop calling VECTOR_MATH_FUNCTIONS compiles and links against
        glibc's libmvec with their ``declare simd`` forms (probed once, cached)."""
        if self._vector_math is None:
            key = cache_key("vector-math-probe", self.cc, self.fingerprint, FORMAT_VERSION,
                            VECTOR_MATH_DECLARATIONS)
            hit = self.cache.get(key, ".probe")
            if hit is not None:
                self._vector_math = hit.read_bytes() == b"1"
            else:
                calls = " + ".join(f"{name}({', '.join(['x[i]'] * _ARITY.get(name, 1))})"
                                   for name in VECTOR_MATH_FUNCTIONS)
                probe = ("#include <math.h>\n" + VECTOR_MATH_DECLARATIONS
                         + "void rvm_probe(const float* restrict x, float* restrict y) {\n"
                         + "#pragma omp simd\n  for (int i = 0; i < 64; ++i) y[i] = "
                         + calls + ";\n}\n")
                flags = list(BASE_FLAGS) + [SIMD_FLAG, *VECTOR_MATH_FLAGS]
                if self.wide_vectors:
                    flags.append(WIDE_VECTOR_FLAG)
                ok = self._compile_uncached(probe, flags, check=False)
                self._vector_math = ok is not None
                self.cache.put(key, ".probe", b"1" if self._vector_math else b"0")
        return self._vector_math

    @property
    def wide_vectors(self):
        """Whether the host has AVX-512: gcc then gets ``-mprefer-vector-width=512`` (its
        default for these CPUs is 256-bit vectors; the reductions of kernels gain ~15%)."""
        return "-mavx512f" in self.fingerprint.split()

    def vector_bytes(self, target_flags=()):
        """The SIMD register width code compiled with ``target_flags`` gets (64 with
        AVX-512, 32 with AVX, else 16), read from the compiler's predefined macros
        (cached); the host's without target flags."""
        key = tuple(target_flags)
        if not key:
            return 64 if self.wide_vectors else self._macro_vector_bytes(("-march=native",))
        if key not in self._vector_bytes:
            self._vector_bytes[key] = self._macro_vector_bytes(key)
        return self._vector_bytes[key]

    def _macro_vector_bytes(self, target_flags):
        march = () if any(f.startswith("-march=") for f in target_flags) else ("-march=native",)
        result = _run([self.cc, *march, *target_flags, "-dM", "-E", "-"], stdin_text="")
        if result.returncode != 0:
            raise CompileError(f"the C compiler refuses the target's flags "
                               f"{' '.join(target_flags)}: {result.stderr.strip()}",
                               diagnostics=result.stderr)
        macros = set(re.findall(r"#define (__AVX\w*__)", result.stdout))
        return 64 if "__AVX512F__" in macros else 32 if "__AVX__" in macros else 16

    def flags(self, use_openmp=True, include_dirs=(), target_flags=(), language="c"):
        """The flags ``compile`` passes (OpenMP only when asked for and supported; ``-I`` for
        each of ``include_dirs``; ``target_flags``, a target's CPU flags such as
        ``-march=haswell`` (Target.compiler_flags), in place of ``-march=native`` when they
        name an architecture, and after it otherwise; ``language`` "c" or "c++")."""
        if language not in LANGUAGES:
            raise ValueError(f"compile: language must be one of {LANGUAGES}, got {language!r}")
        target_flags = list(target_flags)
        base = list(BASE_FLAGS)
        if any(f.startswith("-march=") for f in target_flags):
            base.remove("-march=native")
        flags = base + target_flags + [SIMD_FLAG] + [f"-I{d}" for d in include_dirs]
        if language == "c++":
            flags = [f for f in flags if f != "-std=gnu11"] + list(_CXX_FLAGS)
        if self.vector_bytes(target_flags) == 64:
            flags.append(WIDE_VECTOR_FLAG)
        if use_openmp and self.openmp:
            flags.append(OPENMP_FLAG)
        if self.vector_math:
            flags.extend(VECTOR_MATH_FLAGS)
        return flags

    def cache_key(self, source, flags, include_dirs=()):
        """The cache key of ``source`` compiled with ``flags`` by this compiler (with the
        contents of the headers under ``include_dirs``, not their paths)."""
        flags = tuple(f for f in flags if not f.startswith("-I"))
        headers = tuple(_headers(d) for d in include_dirs)
        if headers:
            return cache_key("rvm-c-kernels", FORMAT_VERSION, self.fingerprint, flags, source,
                             headers)
        return cache_key("rvm-c-kernels", FORMAT_VERSION, self.fingerprint, flags, source)

    def lookup(self, source, use_openmp=True, include_dirs=(), target_flags=(), language="c"):
        """The cached library for ``source``, or None; never runs the compiler on the source."""
        flags = self.flags(use_openmp, include_dirs, target_flags, language)
        key = self.cache_key(source, flags, include_dirs)
        path = self.cache.get(key, ".so")
        return CompiledLibrary(path, key, True) if path is not None else None

    def compile(self, source, use_openmp=True, include_dirs=(), untrusted=False,
                target_flags=(), language="c"):
        """Compiles ``source`` to a shared object (or finds it in the cache): a CompiledLibrary.

        ``include_dirs`` are searched for ``#include``s (rvm's runtime headers, for
        C-source modules); ``language="c++"`` compiles it as C++. Raises CompileError
        showing the offending source lines when the compiler rejects the source. An ``untrusted`` source (regenerated
        kernels, native code from a file) compiles under ``self.limits``
        (CompileLimitError names the limit hit), its errors show only diagnostics
        about the source itself, never included files, and its object, compiled
        or found in the cache, must pass ``elf_check.check_object``
        (UnsafeObjectError otherwise). ``target_flags`` are a target's CPU flags (see
        ``flags``).
        """
        flags = self.flags(use_openmp, include_dirs, target_flags, language)
        key = self.cache_key(source, flags, include_dirs)
        with self._lock:
            path = self.cache.get(key, ".so")
            if path is None:
                if untrusted:
                    self.limits.check_source(source)
                scratch = self.cache.scratch_dir()
                self.invocations += 1
                try:
                    built = self._compile_in(scratch, source, flags, check=True,
                                             untrusted=untrusted)
                    if untrusted:
                        check_object(built.read_bytes(), self._empty_report(flags))
                    self.cache.put(key, ".c", source.encode("utf-8"))
                    path = self.cache.put_file(key, ".so", built)
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                return CompiledLibrary(path, key, False)
            if untrusted:
                check_object(path.read_bytes(), self._empty_report(flags))
            return CompiledLibrary(path, key, True)

    def _empty_report(self, flags):
        """The elf_check report of a minimal library compiled with ``flags`` (cached): what
        the toolchain itself puts in every library, instrumentation included (under
        AddressSanitizer a translation unit with a global gets a constructor and a
        destructor)."""
        flags = tuple(f for f in flags if not f.startswith("-I"))
        report = self._empty_reports.get(flags)
        if report is None:
            key = cache_key("init-probe", self.cc, self.fingerprint, FORMAT_VERSION, flags,
                            _INIT_PROBE)
            path = self.cache.get(key, ".so")
            if path is None:
                scratch = self.cache.scratch_dir()
                try:
                    built = self._compile_in(scratch, _INIT_PROBE, list(flags), check=True)
                    path = self.cache.put_file(key, ".so", built)
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
            report = self._empty_reports[flags] = object_report(path.read_bytes())
        return report

    def _compile_uncached(self, source, flags, check):
        scratch = self.cache.scratch_dir()
        try:
            return self._compile_in(scratch, source, flags, check)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _compile_in(self, scratch, source, flags, check, untrusted=False):
        src = scratch / ("kernels.cc" if "c++" in flags else "kernels.c")
        out = scratch / "kernels.so"
        src.write_text(source, encoding="utf-8")
        argv = [self.cc, *flags, "-o", str(out), str(src)]
        limits = self.limits if untrusted else None
        result = _run(argv, timeout=limits.seconds if untrusted else COMPILE_TIMEOUT,
                      limits=limits)
        if result.returncode != 0 or not out.exists():
            if not check:
                return None
            if untrusted:
                hit = limits.classify(result)
                if hit is not None:
                    raise hit
            diagnostics = own_diagnostics(result.stderr, src) if untrusted else result.stderr
            raise CompileError(format_compile_error(argv, source, diagnostics, src.name),
                               source, diagnostics)
        return out


def _headers(directory):
    """(relative path, contents) of every header under ``directory``, sorted."""
    root = pathlib.Path(directory)
    return tuple((str(p.relative_to(root)), p.read_bytes())
                 for p in sorted(root.rglob("*.h")))


_DEFAULT = {}


def default_compiler():
    """The process-wide Compiler for the environment's compiler and cache directory."""
    cc, cache = env.c_compiler(), env.cache_dir()
    compiler = _DEFAULT.get((cc, str(cache)))
    if compiler is None:
        compiler = _DEFAULT[(cc, str(cache))] = Compiler(cc, cache)
    return compiler
