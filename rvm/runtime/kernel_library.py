"""KernelLibrary: a runtime Module over one compiled C translation unit of packed kernels.

Each function ``name`` of the library is the exported symbol ``rvm_kernel_<name>``
(or another symbol given explicitly, defined in the library itself) of the
packed calling convention. A library built from TensorIR keeps its lowered
TIR (serialized) beside its C source, so it can be saved into an executable
and loaded back elsewhere.

Loading from bytes never dlopens the object stored in them, and never compiles
the stored C unless told to (the bytes may come from anywhere). This module's
loader compiles the stored C only with ``trust_native=True`` (under a time and
memory limit) and otherwise refuses. The compiler side registers the loader
that regenerates the kernels from the stored TIR (``rvm.codegen.c.load``), whose
kernels check their arguments and prove or guard every memory access.
"""
import ctypes
import json
import os
import struct

from rvm.runtime._ffi import _bridge
from rvm.runtime.compiler import default_compiler
from rvm.runtime.module import Module, register_module_loader

_MAGIC = b"RVMCKL\x00\x01"
_FORMAT = 2
_SYMBOL_PREFIX = "rvm_kernel_"
_MAX_PARTS = 8


def kernel_symbol(name):
    """The exported C symbol of kernel ``name``: rvm_kernel_<name>, non-identifier chars as '_'."""
    safe = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_" for c in name)
    return _SYMBOL_PREFIX + safe


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_LIBDL = ctypes.CDLL(None)


def _defining_file(address):
    """The shared object defining ``address`` (dladdr), or None."""
    info = _DlInfo()
    if not address or _LIBDL.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) == 0:
        return None
    return os.path.realpath(info.dli_fname.decode()) if info.dli_fname else None


class KernelLibrary(Module):
    """Compiled packed kernels with their C source.

    ``functions`` maps each function name to its exported symbol. Build one
    with ``KernelLibrary.from_source(source, names)``.
    """

    type_key = "c_kernels"

    def __init__(self, source, functions, library, compiler, use_openmp=True, tir=None):
        super().__init__()
        self.source = source
        self.functions = dict(functions)
        self.compiled = library
        self.use_openmp = use_openmp
        self.tir = tir
        # names of the registered functions the kernels look up (T.call_packed), known for
        # kernels regenerated from a file's TIR; None otherwise
        self.packed_callees = None
        self._compiler = compiler
        self._dll = ctypes.CDLL(str(library.path))
        self._packed = {}
        missing = [s for s in self.functions.values() if not hasattr(self._dll, s)]
        if missing:
            raise ValueError(f"compiled kernel library lacks the symbols: {', '.join(missing)}")
        own = os.path.realpath(str(library.path))
        foreign = [f"'{name}' -> '{sym}' (in {_defining_file(self._address(sym)) or 'unknown'})"
                   for name, sym in self.functions.items()
                   if _defining_file(self._address(sym)) != own]
        if foreign:
            raise ValueError("kernel library maps kernels to symbols it does not define: "
                             + ", ".join(foreign))

    def _address(self, symbol):
        return ctypes.cast(getattr(self._dll, symbol), ctypes.c_void_p).value

    @classmethod
    def from_source(cls, source, functions, compiler=None, use_openmp=True, tir=None,
                    untrusted=False, target_flags=()):
        """Compiles (or finds in the cache) ``source``; ``functions`` is a name list or a
        {name: symbol} dict (a list means symbols ``kernel_symbol(name)``). ``tir`` is the
        serialized TIR the source was generated from (kept for saving); ``untrusted``
        compiles under limits, ``target_flags`` are a target's CPU flags (see
        Compiler.compile)."""
        if not isinstance(functions, dict):
            functions = {name: kernel_symbol(name) for name in functions}
        compiler = compiler or default_compiler()
        library = compiler.compile(source, use_openmp=use_openmp, untrusted=untrusted,
                                   target_flags=target_flags)
        return cls(source, functions, library, compiler, use_openmp, tir)

    def _get_own_function(self, name):
        func = self._packed.get(name)
        if func is None and name in self.functions:
            address = self.get_function_address(name)
            func = self._packed[name] = _bridge.func_from_address(address, name)
        return func

    def get_function_address(self, name):
        """The address of kernel ``name``'s packed C function (for engines calling it directly).

        Valid while the process runs: compiled libraries are never unloaded.
        """
        if name not in self.functions:
            raise ValueError(f"kernel library has no function '{name}'; it has: "
                             f"{', '.join(sorted(self.functions)) or 'nothing'}")
        return self._address(self.functions[name])

    def _own_function_names(self):
        return list(self.functions)

    def get_source(self, fmt="c"):
        """The C source of the library."""
        if fmt not in ("c", ""):
            raise ValueError(f"get_source: format '{fmt}' is not available; expected 'c'")
        return self.source

    @property
    def from_cache(self):
        """Whether the compiled object came from the disk cache (no compiler call)."""
        return self.compiled.from_cache

    def _saved_header(self):
        """The header ``save_to_bytes`` writes (subclasses add their fields)."""
        return {
            "format": _FORMAT,
            "functions": self.functions,
            "use_openmp": self.use_openmp,
            "fingerprint": self._compiler.fingerprint,
            "tir": self.tir is not None,
        }

    def save_to_bytes(self):
        """Header (function table, compiler fingerprint), C source, serialized TIR (empty
        for hand-written C) and compiled object, in one blob."""
        header = self._saved_header()
        parts = [json.dumps(header, sort_keys=True).encode("utf-8"), self.source.encode("utf-8"),
                 self.tir or b"", self.compiled.path.read_bytes()]
        return _MAGIC + b"".join(struct.pack("<Q", len(p)) + p for p in parts)

    def __repr__(self):
        return f"<rvm.runtime.KernelLibrary: {', '.join(self.functions)}>"


def _split_parts(data):
    parts = []
    offset = len(_MAGIC)
    while offset < len(data):
        if len(parts) == _MAX_PARTS or offset + 8 > len(data):
            raise ValueError(f"kernel library bytes are truncated or have trailing bytes "
                             f"(section {len(parts)})")
        (size,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        if offset + size > len(data):
            raise ValueError(f"kernel library bytes are truncated (section {len(parts)})")
        parts.append(bytes(data[offset:offset + size]))
        offset += size
    return parts


def _refuse_native(names, why):
    return ValueError(
        f"kernel library ({', '.join(names) or 'no functions'}) {why}; its native code would "
        "run unchecked, so it is refused. Load the file with load_module(path, "
        "trust_native=True) (CLI: --trust-native) only if you trust where it came from")


def parse_saved_library(data, what="kernel library"):
    """(header, source, functions, tir) of bytes written by ``KernelLibrary.save_to_bytes``;
    ValueError for damaged bytes (``tir`` is None for hand-written C)."""
    data = bytes(data)
    if not data.startswith(_MAGIC):
        raise ValueError(f"not a {what}: bad magic {data[:len(_MAGIC)]!r}")
    parts = _split_parts(data)
    if not parts:
        raise ValueError(f"{what} bytes are truncated (no header)")
    try:
        header = json.loads(parts[0].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"corrupted {what} header: {err}") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        found = header.get("format") if isinstance(header, dict) else header
        raise ValueError(f"{what} format mismatch: expected {_FORMAT}, found {found!r}")
    if len(parts) != 4:
        raise ValueError(f"{what} has {len(parts)} sections, expected 4 (header, "
                         "source, TIR, object)")
    _, source, tir, _ = parts
    try:
        source = source.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"corrupted {what} source: {err}") from None
    functions = header.get("functions")
    if not isinstance(functions, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.isidentifier()
            for k, v in functions.items()):
        raise ValueError(f"corrupted {what}: bad function table")
    has_tir = header.get("tir") is True and bool(tir)
    return header, source, functions, (tir if has_tir else None)


def load_kernel_library(data, compiler=None, trust_native=False):
    """Rebuilds a KernelLibrary saved by ``save_to_bytes`` from its stored C, which runs
    unchecked, so only with ``trust_native=True``; refuses it otherwise (the loader of
    ``rvm.codegen.c.load`` regenerates kernels from their TIR instead). The stored object
    is never loaded.
    """
    header, source, functions, tir = parse_saved_library(data)
    if trust_native:
        return KernelLibrary.from_source(source, functions, compiler,
                                         bool(header.get("use_openmp", True)), tir=tir,
                                         untrusted=True)
    if tir is None:
        raise _refuse_native(list(functions), "holds hand-written C and no TensorIR to "
                             "regenerate its kernels from")
    raise _refuse_native(list(functions), "can be regenerated from its TensorIR only by "
                         "rvm's compiler (rvm.codegen), which this installation lacks")


register_module_loader(KernelLibrary.type_key, load_kernel_library, takes_trust=True)
