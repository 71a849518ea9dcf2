"""Checks on a shared object compiled from untrusted C, read with ``struct`` (no dependency).

Loading a shared object runs code before any kernel is called: its
constructors (``.init_array``, ``.preinit_array``, ``.ctors`` and code added
to ``.init``), the resolvers of its indirect functions (``ifunc`` symbols and
``IRELATIVE`` relocations, run while the loader relocates), and at exit its
destructors. An untrusted library may have no more of these than the
toolchain itself puts in a minimal library (its ``frame_dummy`` and friends,
and what instrumentation such as AddressSanitizer adds per translation
unit), measured by compiling a probe of one function and one global with the
same flags. It must also be hardened as the flags ask: a non-executable stack
(a ``PT_GNU_STACK`` segment without ``PF_X``), a read-only relocation segment
(``PT_GNU_RELRO``) and immediate binding (``BIND_NOW``), so that no function
pointer of the global offset table is writable while kernels run.

``object_report(data)`` returns what the checks read; ``check_object(data,
empty)`` raises ``UnsafeObjectError`` naming the first defect.

>>> import tempfile
>>> from rvm.runtime.compiler import Compiler
>>> lib = Compiler(cache_dir=tempfile.mkdtemp()).compile("int f(void) { return 1; }")
>>> report = object_report(lib.path.read_bytes())
>>> report.relro, report.bind_now, report.exec_stack, report.init["indirect functions"]
(True, True, False, 0)
"""
import struct

from rvm.support.errors import RVMError

PT_DYNAMIC, PT_GNU_STACK, PT_GNU_RELRO = 2, 0x6474E551, 0x6474E552
PF_X = 1
DT_INIT, DT_FINI, DT_BIND_NOW, DT_FLAGS = 12, 13, 24, 30
DT_INIT_ARRAYSZ, DT_FINI_ARRAYSZ, DT_PREINIT_ARRAYSZ = 27, 28, 33
DT_FLAGS_1 = 0x6FFFFFFB
DF_BIND_NOW, DF_1_NOW = 0x8, 0x1
# Sections whose contents run when the library is loaded or unloaded.
INIT_SECTIONS = (".init", ".fini", ".init_array", ".fini_array", ".preinit_array", ".ctors",
                 ".dtors")
SHT_SYMTAB, SHT_RELA, SHT_REL, SHT_DYNSYM = 2, 4, 9, 11
STT_GNU_IFUNC = 10
# e_machine -> the relocation type that calls a resolver (IRELATIVE).
_IRELATIVE = {3: 42, 62: 37, 183: 1032, 243: 58, 40: 160, 21: 248}
_DYNAMIC_SIZES = {DT_INIT_ARRAYSZ: "DT_INIT_ARRAYSZ", DT_FINI_ARRAYSZ: "DT_FINI_ARRAYSZ",
                  DT_PREINIT_ARRAYSZ: "DT_PREINIT_ARRAYSZ"}


class UnsafeObjectError(RVMError):
    """A shared object compiled from untrusted C has constructors or lacks the hardening."""


class ElfFormatError(UnsafeObjectError):
    """The compiler's output is not an ELF shared object this module can read."""


class ObjectReport:
    """What ``object_report`` read: ``init`` maps each initializer's name (a section of
    INIT_SECTIONS or a dynamic tag) to its size in bytes, and "indirect functions" to the
    number of ifunc symbols and IRELATIVE relocations (of the machines in _IRELATIVE);
    ``exec_stack``, ``relro`` and ``bind_now`` are booleans."""

    def __init__(self, init, exec_stack, relro, bind_now):
        self.init = init
        self.exec_stack = exec_stack
        self.relro = relro
        self.bind_now = bind_now


def _reader(data):
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ElfFormatError(f"compiled object: expected an ELF file, found {len(data)} bytes "
                             f"starting {data[:4]!r}")
    klass, order = data[4], data[5]
    if klass not in (1, 2) or order not in (1, 2):
        raise ElfFormatError(f"compiled object: unknown ELF class {klass} or byte order {order}")
    prefix = "<" if order == 1 else ">"
    word = "Q" if klass == 2 else "I"

    def read(fmt, offset):
        fmt = prefix + fmt.replace("W", word)
        if offset < 0 or offset + struct.calcsize(fmt) > len(data):
            raise ElfFormatError(f"compiled object: ELF structure at offset {offset} lies past "
                                 f"the end of the file ({len(data)} bytes)")
        return struct.unpack_from(fmt, data, offset)
    return read, klass == 2


def _segments(read, is64):
    if is64:
        phoff, = read("Q", 32)
        phentsize, phnum = read("HH", 54)
    else:
        phoff, = read("I", 28)
        phentsize, phnum = read("HH", 42)
    for k in range(phnum):
        at = phoff + k * phentsize
        if is64:
            ptype, flags, offset, _, _, filesz = read("IIQQQQ", at)
        else:
            ptype, offset, _, _, filesz, _, flags = read("IIIIIII", at)
        yield ptype, flags, offset, filesz


def _sections(read, is64):
    if is64:
        shoff, = read("Q", 40)
        shentsize, shnum, shstrndx = read("HHH", 58)
    else:
        shoff, = read("I", 32)
        shentsize, shnum, shstrndx = read("HHH", 46)
    headers = []
    for k in range(shnum):
        at = shoff + k * shentsize
        if is64:
            name, kind, _, _, offset, size = read("IIQQQQ", at)
        else:
            name, kind, _, _, offset, size = read("IIIIII", at)
        headers.append((name, kind, offset, size))
    if not headers or shstrndx >= len(headers):
        return []
    _, _, str_offset, str_size = headers[shstrndx]
    named = []
    for name, kind, offset, size in headers:
        chars = []
        while name < str_size and len(chars) < 256:
            (c,) = read("B", str_offset + name)
            if c == 0:
                break
            chars.append(chr(c))
            name += 1
        named.append(("".join(chars), kind, offset, size))
    return named


def _indirect_functions(read, is64, sections):
    """How many ifunc symbols and IRELATIVE relocations the sections hold."""
    (machine,) = read("H", 18)
    irelative = _IRELATIVE.get(machine)
    count = 0
    for _, kind, offset, size in sections:
        if kind in (SHT_SYMTAB, SHT_DYNSYM):
            entry, info_at = (24, 4) if is64 else (16, 12)
            for k in range(size // entry):
                (info,) = read("B", offset + k * entry + info_at)
                count += (info & 0xF) == STT_GNU_IFUNC
        elif kind in (SHT_RELA, SHT_REL) and irelative is not None:
            entry = (24 if kind == SHT_RELA else 16) if is64 else (12 if kind == SHT_RELA else 8)
            for k in range(size // entry):
                (info,) = read("Q" if is64 else "I", offset + k * entry + (8 if is64 else 4))
                kind_of = info & 0xFFFFFFFF if is64 else info & 0xFF
                count += kind_of == irelative
    return count


def object_report(data):
    """An ObjectReport of the ELF shared object ``data`` (bytes)."""
    read, is64 = _reader(data)
    init, exec_stack, relro, bind_now, stack_seen = {}, False, False, False, False
    entry = 16 if is64 else 8
    for ptype, flags, offset, filesz in _segments(read, is64):
        if ptype == PT_GNU_STACK:
            stack_seen, exec_stack = True, bool(flags & PF_X)
        elif ptype == PT_GNU_RELRO:
            relro = True
        elif ptype == PT_DYNAMIC:
            for k in range(filesz // entry):
                tag, value = read("qQ" if is64 else "iI", offset + k * entry)
                if tag == 0:
                    break
                if tag == DT_BIND_NOW or tag == DT_FLAGS and value & DF_BIND_NOW \
                        or tag == DT_FLAGS_1 and value & DF_1_NOW:
                    bind_now = True
                elif tag in _DYNAMIC_SIZES:
                    init[_DYNAMIC_SIZES[tag]] = value
                elif tag in (DT_INIT, DT_FINI):
                    name = "DT_INIT" if tag == DT_INIT else "DT_FINI"
                    init[name] = init.get(name, 0) + 1
    sections = _sections(read, is64)
    for name, _, _, size in sections:
        if name in INIT_SECTIONS or name.startswith((".init_array.", ".fini_array.", ".ctors.",
                                                     ".dtors.")):
            init[name] = init.get(name, 0) + size
    init["indirect functions"] = _indirect_functions(read, is64, sections)
    # Without a PT_GNU_STACK segment the loader gives the stack PF_X on most targets.
    return ObjectReport(init, exec_stack or not stack_seen, relro, bind_now)


def check_object(data, empty):
    """Raises UnsafeObjectError unless ``data`` (an ELF shared object compiled from untrusted
    C) has no initializer beyond those of ``empty`` (the report of a minimal library
    compiled with the same flags), a non-executable stack, RELRO and immediate binding."""
    report = object_report(data)
    for name, size in sorted(report.init.items()):
        allowed = empty.init.get(name, 0)
        if size > allowed:
            what = "entries" if name == "indirect functions" else "bytes"
            raise UnsafeObjectError(
                f"compiled object of untrusted code has code run at load or exit: {name} "
                f"holds {size} {what}, a minimal library {allowed}; refusing to load it")
    if report.exec_stack:
        raise UnsafeObjectError("compiled object of untrusted code asks for an executable "
                                "stack (PT_GNU_STACK with PF_X, or none); refusing to load it")
    if not report.relro:
        raise UnsafeObjectError("compiled object of untrusted code lacks a PT_GNU_RELRO "
                                "segment (expected full RELRO); refusing to load it")
    if not report.bind_now:
        raise UnsafeObjectError("compiled object of untrusted code lacks immediate binding "
                                "(expected BIND_NOW); refusing to load it")
    return report
