"""Executable: the output of the ExecBuilder and the input of the VirtualMachine.

It holds the function table, the constant pool, the instructions, the kernel
libraries and other runtime modules it needs, and a source map from
instruction to (Relax function, binding). It saves to one file
(``export_library``) and loads back (``Executable.load``/``load_module``),
verified on every load.
"""
import collections

from rvm.bytecode.callees import GlobalPolicy, check_global_callees
from rvm.bytecode.constants import constant_tag
from rvm.bytecode.disasm import describe_module, disassemble
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.function import FuncKind
from rvm.bytecode.instruction import encode_instruction
from rvm.bytecode.serialize import MAGIC, MAX_FILE_BYTES, dump_executable, undump_executable
from rvm.bytecode.verify import verify_executable
from rvm.runtime.loader import register_file_loader
from rvm.runtime.module import Module, load_module_from_bytes


class Executable(Module):
    """A verified bytecode program.

    >>> from rvm.bytecode.builder import ExecBuilder
    >>> ib = ExecBuilder()
    >>> with ib.function("ident", num_inputs=1):
    ...     _ = ib.emit_ret(ib.r(0))
    >>> print(ib.get().as_text().splitlines()[1])
         0: ret   %0
    """

    type_key = "relax.Executable"

    def __init__(self, func_table, constants, instructions, source_map=None,
                 kernel_libs=(), imported_modules=(), verify=True):
        super().__init__()
        self.func_table = list(func_table)
        self.func_map = {f.name: i for i, f in enumerate(self.func_table)}
        self.constants = list(constants)
        self.instructions = list(instructions)
        self.source_map = dict(source_map or {})
        self.kernel_libs = list(kernel_libs)
        # None: built in this process, may call any global; from a file: a GlobalPolicy
        self.global_policy = None
        for mod in imported_modules:
            self.import_module(mod)
        if verify:
            verify_executable(self)

    # -- queries ---------------------------------------------------------------------------

    def function_info(self, name):
        """The FuncInfo of function ``name``; ValueError listing the VM functions if absent."""
        index = self.func_map.get(name)
        if index is None:
            raise ValueError(f"executable has no function '{name}'; VM functions: "
                             f"{', '.join(self.vm_function_names()) or 'none'}")
        return self.func_table[index]

    def vm_function_names(self):
        """Names of the functions implemented in bytecode, in table order."""
        return [f.name for f in self.func_table if f.kind == FuncKind.VM]

    def source_of(self, pc):
        """(Relax function, binding) of absolute instruction ``pc``, or None."""
        return self.source_map.get(pc)

    def function_at(self, pc):
        """The index of the VM function containing absolute instruction ``pc``, or None."""
        for index, info in enumerate(self.func_table):
            if info.kind == FuncKind.VM and info.start <= pc < info.end:
                return index
        return None

    @property
    def words(self):
        """The instructions as a flat list of 64-bit words."""
        return [w for instr in self.instructions for w in encode_instruction(instr)]

    def add_kernel_library(self, module):
        """Attaches a kernel library, searched first when resolving callees."""
        if not isinstance(module, Module):
            raise TypeError(f"add_kernel_library expects a Module, got {type(module).__name__}")
        self.kernel_libs.append(module)

    # -- text ------------------------------------------------------------------------------

    def as_text(self):
        """The disassembly: one instruction per line, then the constant pool."""
        return disassemble(self)

    def stats(self):
        """A summary: functions by kind, instructions by opcode, constants by type, bytes."""
        kinds = collections.Counter(f.kind.name.lower() for f in self.func_table)
        ops = collections.Counter(i.op.name for i in self.instructions)
        consts = collections.Counter(constant_tag(c) for c in self.constants)
        const_bytes = sum(c.nbytes for c in self.constants if constant_tag(c) == "ndarray")
        lines = [
            f"functions: {len(self.func_table)} ("
            + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())) + ")",
            f"instructions: {len(self.instructions)} ("
            + ", ".join(f"{k}: {n}" for k, n in sorted(ops.items())) + f"), "
            f"{len(self.words) * 8} bytes",
            f"constants: {len(self.constants)} ("
            + ", ".join(f"{k}: {n}" for k, n in sorted(consts.items()))
            + f"), {const_bytes} tensor bytes",
            f"modules: {len(self.kernel_libs)} kernel libraries, "
            f"{len(self.imported_modules)} imported"
            + "".join(f"\n  import {describe_module(m)}" for m in self.imported_modules),
        ]
        return "\n".join(lines)

    def __repr__(self):
        return (f"<rvm Executable: {len(self.func_table)} functions, "
                f"{len(self.instructions)} instructions, {len(self.constants)} constants>")

    # -- files -----------------------------------------------------------------------------

    def save_to_bytes(self):
        """The file contents (see rvm.bytecode.serialize)."""
        modules = [(role, mod.type_key, mod.save_to_bytes())
                   for role, mods in (("kernel", self.kernel_libs),
                                      ("import", self.imported_modules))
                   for mod in mods]
        return dump_executable({"functions": self.func_table, "constants": self.constants,
                                "code": self.instructions, "modules": modules,
                                "source_map": self.source_map})

    def export_library(self, path, fcompile=None, workspace_dir=None, **options):
        """Writes one self-contained file (kernels and runtime modules included).

        TVM's ``fcompile``, ``workspace_dir`` and compiler ``options`` are accepted so TVM
        code runs unchanged; they do not apply, since the file is rvm's executable format
        (kernels inside are recompiled from their TIR on load), not a shared library.
        """
        if fcompile is not None and not callable(fcompile):
            raise TypeError(f"export_library: fcompile must be callable, got "
                            f"{type(fcompile).__name__}")
        data = self.save_to_bytes()
        with open(path, "wb") as f:
            f.write(data)

    @classmethod
    def from_bytes(cls, data, where="executable", trust_native=False, allow=None,
                   max_file_bytes=None):
        """Loads and verifies an executable; ExecutableFormatError naming what is wrong.

        Kernels are regenerated from their stored TensorIR; ``trust_native=True``
        is needed for modules of hand-written native code (see rvm.runtime.kernel_library).
        The executable may call the VM builtins and the globals the user's code registered,
        or with ``allow`` (a list of names) the VM builtins and exactly those names
        (rvm.bytecode.callees); a call of any other registered global is refused here.
        ``max_file_bytes`` raises the file-size limit (rvm.bytecode.serialize.MAX_FILE_BYTES,
        chosen so the largest file loads in bounded time and memory) for a trusted large model.
        """
        policy = GlobalPolicy(allow)
        parts = undump_executable(data, where, max_file_bytes)
        try:
            ex = cls(parts["functions"], parts["constants"], parts["code"],
                     parts["source_map"])
        except ExecutableFormatError as err:
            raise type(err)(f"{where}: {err}") from None
        # Embedded modules are loaded only once the bytecode has passed the verifier.
        for role, key, blob in parts["modules"]:
            try:
                module = load_module_from_bytes(key, blob, trust_native=trust_native)
            except Exception as err:  # an unknown type or a loader rejecting its bytes
                raise ExecutableFormatError(
                    f"{where}: corrupted section 'modules': cannot load module of type "
                    f"'{key}': {err}") from None
            if role == "kernel":
                ex.add_kernel_library(module)
            else:
                ex.import_module(module)
        ex.global_policy = policy
        check_global_callees(ex, where)
        return ex

    @classmethod
    def load(cls, path, trust_native=False, allow=None, max_file_bytes=None):
        """Reads a file written by ``export_library`` (``trust_native``, ``allow``,
        ``max_file_bytes``: see from_bytes)."""
        limit = MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes
        with open(path, "rb") as f:
            data = f.read(limit + 1)  # a longer file is refused by its size alone
        return cls.from_bytes(data, where=str(path), trust_native=trust_native, allow=allow,
                              max_file_bytes=limit)


def load_module(path, trust_native=False, allow=None, max_file_bytes=None):
    """Loads an executable file (the loader rvm.runtime.loader dispatches to)."""
    return Executable.load(path, trust_native=trust_native, allow=allow,
                           max_file_bytes=max_file_bytes)


register_file_loader(MAGIC, load_module, "rvm bytecode executable")
