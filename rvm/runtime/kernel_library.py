"""KernelLibrary: a runtime Module over one compiled C translation unit of packed kernels.

Each function ``name`` of the library is the exported symbol ``rvm_kernel_<name>``
(or another symbol given explicitly) of the packed calling convention. The
library keeps its C source, so it can be saved into an executable and loaded
back elsewhere.

Loading from bytes never dlopens the object stored in them (the bytes may
come from anywhere): the embedded C source is compiled again through the
compiler cache, which on the machine that built it is a cache hit. Sources
that would run code when loaded (constructors, inline assembly) are refused;
this is not a sandbox: running an executable runs its kernels.
"""
import ctypes
import json
import re
import struct

from rvm.runtime._ffi import _bridge
from rvm.runtime.compiler import default_compiler
from rvm.runtime.module import Module, register_module_loader

_MAGIC = b"RVMCKL\x00\x01"
# Code that would run at load time or escape C: refused in sources loaded from bytes.
_LOAD_TIME_CODE = re.compile(r"\b(constructor|destructor|init_array|fini_array|__asm__|asm)\b")
_STRINGS_AND_COMMENTS = re.compile(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*', re.S)
_FORMAT = 1
_SYMBOL_PREFIX = "rvm_kernel_"


def kernel_symbol(name):
    """The exported C symbol of kernel ``name``: rvm_kernel_<name>, non-identifier chars as '_'."""
    safe = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_" for c in name)
    return _SYMBOL_PREFIX + safe


class KernelLibrary(Module):
    """Compiled packed kernels with their C source.

    ``functions`` maps each function name to its exported symbol. Build one
    with ``KernelLibrary.from_source(source, names)``.
    """

    type_key = "c_kernels"

    def __init__(self, source, functions, library, compiler, use_openmp=True):
        super().__init__()
        self.source = source
        self.functions = dict(functions)
        self.compiled = library
        self.use_openmp = use_openmp
        self._compiler = compiler
        self._dll = ctypes.CDLL(str(library.path))
        self._packed = {}
        missing = [s for s in self.functions.values() if not hasattr(self._dll, s)]
        if missing:
            raise ValueError(f"compiled kernel library lacks the symbols: {', '.join(missing)}")

    @classmethod
    def from_source(cls, source, functions, compiler=None, use_openmp=True):
        """Compiles (or finds in the cache) ``source``; ``functions`` is a name list or a
        {name: symbol} dict (a list means symbols ``kernel_symbol(name)``)."""
        if not isinstance(functions, dict):
            functions = {name: kernel_symbol(name) for name in functions}
        compiler = compiler or default_compiler()
        library = compiler.compile(source, use_openmp=use_openmp)
        return cls(source, functions, library, compiler, use_openmp)

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
        return ctypes.cast(getattr(self._dll, self.functions[name]), ctypes.c_void_p).value

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

    def save_to_bytes(self):
        """Source, function table, compiler fingerprint and compiled object, in one blob."""
        header = {
            "format": _FORMAT,
            "functions": self.functions,
            "use_openmp": self.use_openmp,
            "fingerprint": self._compiler.fingerprint,
        }
        parts = [json.dumps(header, sort_keys=True).encode("utf-8"), self.source.encode("utf-8"),
                 self.compiled.path.read_bytes()]
        return _MAGIC + b"".join(struct.pack("<Q", len(p)) + p for p in parts)

    def __repr__(self):
        return f"<rvm.runtime.KernelLibrary: {', '.join(self.functions)}>"


def _split_parts(data, count):
    parts = []
    offset = len(_MAGIC)
    for i in range(count):
        if offset + 8 > len(data):
            raise ValueError(f"kernel library bytes are truncated (section {i} of {count})")
        (size,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        if offset + size > len(data):
            raise ValueError(f"kernel library bytes are truncated (section {i} of {count})")
        parts.append(bytes(data[offset:offset + size]))
        offset += size
    if offset != len(data):
        raise ValueError(f"kernel library bytes have {len(data) - offset} trailing bytes")
    return parts


def parse_saved_library(data, what="kernel library"):
    """(header, source, functions) of bytes written by ``KernelLibrary.save_to_bytes``.

    ValueError for damaged bytes and for sources that would run code when
    loaded (constructors, inline assembly).
    """
    data = bytes(data)
    if not data.startswith(_MAGIC):
        raise ValueError(f"not a {what}: bad magic {data[:len(_MAGIC)]!r}")
    head, source, _ = _split_parts(data, 3)
    try:
        header = json.loads(head.decode("utf-8"))
        source = source.decode("utf-8")
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"corrupted {what} header: {err}") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        found = header.get("format") if isinstance(header, dict) else header
        raise ValueError(f"{what} format mismatch: expected {_FORMAT}, found {found!r}")
    functions = header.get("functions")
    if not isinstance(functions, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.isidentifier()
            for k, v in functions.items()):
        raise ValueError(f"corrupted {what}: bad function table")
    code = _STRINGS_AND_COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)
    match = _LOAD_TIME_CODE.search(code)
    if match:
        line = code.count("\n", 0, match.start()) + 1
        raise ValueError(f"{what} source uses '{match.group(1)}' (line {line}); "
                         "code loaded from bytes may not run code at load time")
    return header, source, functions


def load_kernel_library(data, compiler=None):
    """Rebuilds a KernelLibrary saved by ``save_to_bytes``, recompiling its source (cached).

    The stored object is not loaded: bytes are untrusted, and the source,
    compiled by this machine's compiler, is the library's definition.
    """
    header, source, functions = parse_saved_library(data)
    return KernelLibrary.from_source(source, functions, compiler,
                                     use_openmp=bool(header.get("use_openmp", True)))


register_module_loader(KernelLibrary.type_key, load_kernel_library)
