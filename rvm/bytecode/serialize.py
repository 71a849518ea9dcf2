"""The executable file format: dump and undump, mirror images of each other.

Layout (little-endian)::

    magic        8 bytes  b"RVMEXEC\\0"
    version      u32      FORMAT_VERSION
    sections     in SECTIONS order, each:
        index    u32      its position in SECTIONS
        length   u64      payload bytes
        crc32    u32      of the payload
        payload  msgpack

Nothing is pickled; every value read is checked for its type and range before
use, and every failure is an ExecutableFormatError saying which check failed.

Sizes are bounded so that the largest file the limits allow loads, verifier and
VirtualMachine construction included, in under 2 s and 256 MB on either engine
(benchmarks/bench_load.py): ``MAX_FILE_BYTES`` for the whole file (tensor
constants and kernel libraries included), ``SECTION_BYTES`` per section,
``LIMITS`` entries per section, and ``MAX_ELEMENTS`` array elements in the
whole file (a msgpack array element is one byte on disk but up to ~100 bytes
as a Python object, so bytes alone would not bound memory; map entries count
too). A file over a limit is refused before its contents are
used, with the limit's name and value. A user who trusts a larger model's file that far
raises the file-size limit when loading it (``max_file_bytes``).
"""
import struct
import zlib

import msgpack

from rvm.bytecode.constants import decode_constant, encode_constant
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import decode_instructions, encode_instruction

MAGIC = b"RVMEXEC\x00"
FORMAT_VERSION = 1
SECTIONS = ("functions", "constants", "code", "modules", "source_map")
_HEADER = struct.Struct("<8sI")
_SECTION = struct.Struct("<IQI")
MODULE_ROLES = ("kernel", "import")
_KINDS = frozenset(int(k) for k in FuncKind)
# The most a loaded file may hold: bytes in all, bytes per section, entries per section
# (code: instruction words), array elements in all.
MAX_FILE_BYTES = 1 << 25
# None: bounded by the file's size alone (tensor data and kernel libraries).
SECTION_BYTES = {"functions": 1 << 20, "constants": None, "code": 1 << 20, "modules": None,
                 "source_map": 1 << 20}
LIMITS = {"functions": 1 << 12, "constants": 1 << 14, "code": 1 << 16, "modules": 1 << 8,
          "source_map": 1 << 15}
MAX_ELEMENTS = 1 << 19


def dump_executable(parts):
    """Bytes of an executable given as a dict with the keys of ``SECTIONS``.

    ``functions``: FuncInfo list; ``constants``: pool values; ``code``:
    Instructions; ``modules``: (role, type_key, bytes); ``source_map``:
    {pc: (relax function, binding)}.
    """
    payloads = {
        "functions": [[int(f.kind), f.name, f.start, f.end, f.num_args, f.num_regs,
                       list(f.param_names)] for f in parts["functions"]],
        "constants": [encode_constant(v) for v in parts["constants"]],
        "code": [w for instr in parts["code"] for w in encode_instruction(instr)],
        "modules": [[role, key, data] for role, key, data in parts["modules"]],
        "source_map": [[pc, func, binding]
                       for pc, (func, binding) in sorted(parts["source_map"].items())],
    }
    out = [_HEADER.pack(MAGIC, FORMAT_VERSION)]
    for index, name in enumerate(SECTIONS):
        payload = msgpack.packb(payloads[name], use_bin_type=True)
        out.append(_SECTION.pack(index, len(payload), zlib.crc32(payload)))
        out.append(payload)
    return b"".join(out)


class _OverLimit(Exception):
    pass


class _ElementBudget:
    """msgpack hooks that count the elements of arrays (and of maps, which the format
    does not use but a file may hold) against ``MAX_ELEMENTS``."""

    def __init__(self):
        self.left = MAX_ELEMENTS

    def spend(self, count):
        self.left -= count + 1
        if self.left < 0:
            raise _OverLimit(f"more than {MAX_ELEMENTS} array elements in the file, over "
                             f"the limit (MAX_ELEMENTS)")

    def list_hook(self, items):
        self.spend(len(items))
        return items

    def map_hook(self, pairs):
        self.spend(2 * len(pairs))
        return dict(pairs)


def _read_sections(data, where, max_file_bytes=None):
    max_file_bytes = MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes
    if len(data) > max_file_bytes:
        raise ExecutableFormatError(
            f"{where}: the file has more than {max_file_bytes} bytes, over the limit "
            f"(MAX_FILE_BYTES); a larger model can be loaded with a higher limit "
            f"(load_module(path, max_file_bytes=N)) or take its weights at run time")
    if len(data) < _HEADER.size:
        if not MAGIC.startswith(bytes(data[:len(MAGIC)])):
            raise ExecutableFormatError(f"{where}: bad magic: not an rvm executable")
        raise ExecutableFormatError(f"{where}: truncated: {len(data)} bytes, shorter than "
                                    f"the {_HEADER.size}-byte header")
    magic, version = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ExecutableFormatError(f"{where}: bad magic: expected {MAGIC!r}, found {magic!r}")
    if version != FORMAT_VERSION:
        raise ExecutableFormatError(
            f"{where}: version mismatch: file {version}, runtime {FORMAT_VERSION}")
    pos = _HEADER.size
    sections, budget = {}, _ElementBudget()
    for index, name in enumerate(SECTIONS):
        if pos + _SECTION.size > len(data):
            raise ExecutableFormatError(f"{where}: truncated: section '{name}' header is "
                                        f"missing (file ends at byte {len(data)})")
        found, length, crc = _SECTION.unpack_from(data, pos)
        if found != index:
            raise ExecutableFormatError(f"{where}: corrupted section '{name}': expected "
                                        f"section index {index}, found {found}")
        pos += _SECTION.size
        limit = SECTION_BYTES[name] or max_file_bytes
        if length > limit:
            raise ExecutableFormatError(f"{where}: section '{name}' has {length} bytes, over "
                                        f"the limit of {limit}")
        if pos + length > len(data):
            raise ExecutableFormatError(
                f"{where}: truncated: section '{name}' needs {length} bytes, "
                f"{len(data) - pos} remain")
        payload = data[pos:pos + length]
        if zlib.crc32(payload) != crc:
            raise ExecutableFormatError(f"{where}: corrupted section '{name}': checksum "
                                        f"mismatch")
        try:
            sections[name] = msgpack.unpackb(payload, raw=False, strict_map_key=True,
                                             list_hook=budget.list_hook,
                                             object_pairs_hook=budget.map_hook)
        except _OverLimit as err:
            raise ExecutableFormatError(f"{where}: section '{name}': {err}") from None
        except Exception as err:  # msgpack raises several types for malformed input
            raise ExecutableFormatError(
                f"{where}: corrupted section '{name}': {type(err).__name__}: {err}") from None
        value = sections[name]
        if isinstance(value, list) and len(value) > LIMITS[name]:
            raise ExecutableFormatError(f"{where}: section '{name}' has {len(value)} entries, "
                                        f"over the limit of {LIMITS[name]}")
        pos += length
    if pos != len(data):
        raise ExecutableFormatError(f"{where}: {len(data) - pos} trailing bytes after the "
                                    f"last section")
    return sections


def _expect(cond, section, message):
    if not cond:
        raise ExecutableFormatError(f"corrupted section '{section}': {message}")


INT32_MAX = (1 << 31) - 1


def _is_int(x, lo=0, hi=(1 << 63) - 1):
    return type(x) is int and lo <= x <= hi


def _expect_printable(text, section, what):
    """A callee name (looked up in the registry, printed in errors, passed to C as a
    NUL-terminated string) holds printable characters only."""
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        raise ExecutableFormatError(
            f"corrupted section '{section}': {what} {text!r:.80} holds the non-printable "
            f"character {bad!r}; expected printable characters only")


def _decode_functions(raw):
    _expect(isinstance(raw, list), "functions", "expected a list")
    out = []
    for i, entry in enumerate(raw):
        _expect(isinstance(entry, list) and len(entry) == 7, "functions",
                f"entry {i}: expected 7 fields")
        kind, name, start, end, num_args, num_regs, params = entry
        _expect(_is_int(kind) and kind in _KINDS, "functions",
                f"entry {i}: unknown kind {kind!r}")
        _expect(isinstance(name, str) and name, "functions", f"entry {i}: bad name")
        _expect_printable(name, "functions", f"entry {i}: name")
        # int32: the engines hold them in C ints (the verifier bounds them further).
        _expect(all(_is_int(x, 0, INT32_MAX) for x in (start, end, num_args, num_regs)),
                "functions", f"function '{name}': start, end, num_args, num_regs must be "
                f"ints in [0, {INT32_MAX}], got {[start, end, num_args, num_regs]}")
        _expect(isinstance(params, list) and all(isinstance(p, str) for p in params),
                "functions", f"function '{name}': param_names must be strings")
        out.append(FuncInfo(FuncKind(kind), name, start, end, num_args, num_regs,
                            tuple(params)))
    return out


def _decode_modules(raw):
    _expect(isinstance(raw, list), "modules", "expected a list")
    out = []
    for i, entry in enumerate(raw):
        _expect(isinstance(entry, list) and len(entry) == 3, "modules",
                f"entry {i}: expected [role, type_key, bytes]")
        role, key, blob = entry
        _expect(role in MODULE_ROLES, "modules", f"entry {i}: unknown role {role!r}")
        _expect(isinstance(key, str) and isinstance(blob, bytes), "modules",
                f"entry {i}: type_key must be a string and data bytes")
        _expect_printable(key, "modules", f"entry {i}: type_key")
        out.append((role, key, blob))
    return out


def _decode_source_map(raw):
    _expect(isinstance(raw, list), "source_map", "expected a list")
    out = {}
    for entry in raw:
        _expect(isinstance(entry, list) and len(entry) == 3 and _is_int(entry[0])
                and isinstance(entry[1], str) and isinstance(entry[2], str), "source_map",
                "entries must be [pc, function, binding]")
        out[entry[0]] = (entry[1], entry[2])
    return out


def undump_executable(data, where="executable", max_file_bytes=None):
    """The parts dict of ``dump_executable`` from bytes; ExecutableFormatError if bad.
    ``max_file_bytes`` raises the file-size limit (default ``MAX_FILE_BYTES``).

    Embedded modules are returned as (role, type_key, bytes): loading them is
    the caller's decision.
    """
    sections = _read_sections(memoryview(data), where, max_file_bytes)
    constants = sections["constants"]
    _expect(isinstance(constants, list), "constants", "expected a list")
    code = sections["code"]
    _expect(isinstance(code, list), "code", "expected a list of words")
    # Decoded in place, so each tensor's msgpack bytes are freed once its NDArray exists.
    for i, entry in enumerate(constants):
        constants[i] = decode_constant(entry, i)
    return {
        "functions": _decode_functions(sections["functions"]),
        "constants": constants,
        "code": decode_instructions(code),
        "modules": _decode_modules(sections["modules"]),
        "source_map": _decode_source_map(sections["source_map"]),
    }
