"""Generates native/generated/rvm_vm_contract.h from the VM contract,
rvm/bytecode/contract.py (run by native/build_native.py before compiling; a test
checks that the header in the build is the one the contract gives).
"""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent
CONTRACT = ROOT.parent / "rvm" / "bytecode" / "contract.py"
DTYPE_TABLE = ROOT.parent / "rvm" / "runtime" / "dtype_table.py"
HEADER = ROOT / "generated" / "rvm_vm_contract.h"


def load_contract(path=CONTRACT, name="rvm_vm_contract"):
    """The contract module, loaded from its file (rvm itself is not importable yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _camel(name):
    return "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))


def _c_string(text):
    """``text`` as a C string literal (printable ASCII only)."""
    if not all(" " <= ch <= "~" for ch in text):
        raise ValueError(f"contract strings must be printable ASCII: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _enum(prefix, members, comment):
    lines = [f"/* {comment} */", "enum {"]
    lines += [f"  kRVM{prefix}{_camel(m.name)} = {int(m)}," for m in members]
    return lines + ["};", ""]


def render_contract_header(c, dtypes=None):
    """The text of rvm_vm_contract.h for the contract module ``c`` and the dtype table
    module ``dtypes`` (by default rvm/runtime/dtype_table.py)."""
    if dtypes is None:
        dtypes = load_contract(DTYPE_TABLE, "rvm_dtype_table")
    out = ["/* Generated from rvm/bytecode/contract.py by native/build_native.py when the",
           " * package is built: edit the contract, not this file. */",
           "#ifndef RVM_VM_CONTRACT_H_", "#define RVM_VM_CONTRACT_H_", "",
           '#include "rvm/c_runtime_api.h"', "",
           f"#define RVM_VM_VALUE_BITS {c.VALUE_BITS}",
           f"#define RVM_VM_VOID_REG ({c.VOID_REG})",
           f"#define RVM_VM_MAX_ARGS {c.MAX_ARGS}",
           f"#define RVM_VM_MAX_CALL_DEPTH {c.MAX_CALL_DEPTH}",
           f"#define RVM_VM_STEP_LIMIT_MESSAGE {_c_string(c.STEP_LIMIT_MESSAGE)}", ""]
    out += _enum("Arg", c.ArgKind, "ArgKind: the kind of a CALL argument word")
    out += ["/* OPCODES */", "enum {"]
    out += [f"  kRVMOp{_camel(op.name)} = {op.code}, /* {op.rtl} */" for op in c.OPCODES.values()]
    out += ["};", ""]
    out += _enum("Linked", c.LinkedArg, "LinkedArg: the kind of a linked argument")
    out += _enum("Callee", c.CalleeKind, "CalleeKind: how a function-table entry is called")
    out += _enum("Match", c.MatchCode, "MatchCode: vm.builtin.match_shape dimension codes")
    out += _enum("Make", c.MakeCode, "MakeCode: vm.builtin.make_shape dimension codes")
    out += ["/* LINKED_FIELDS: one linked instruction */", "typedef struct {"]
    out += [f"  int32_t {name}; /* {doc} */" for name, doc in c.LINKED_FIELDS]
    out += ["} RVMVMLinkedInstr;", "",
            "/* A linked argument: a LinkedArg kind and a register or value index. */",
            "typedef struct {", "  int32_t kind;", "  int32_t index;", "} RVMVMLinkedArg;", "",
            "/* C_BUILTINS: the builtins implemented in C (native/src/vm_builtins*.c). */"]
    out.append("#define RVM_VM_BUILTIN_ARGS "
               "RVMValue *args, int *codes, int n, RVMValue *ret, int *ret_code")
    out += [f"int {b.symbol}(RVM_VM_BUILTIN_ARGS);" for b in c.C_BUILTINS.values()]
    out += ["", "/* X(name, symbol, min_args, max_args (-1: any)) for each C builtin */",
            "#define RVM_VM_C_BUILTINS(X) \\"]
    for b in c.C_BUILTINS.values():
        most = -1 if b.max_args is None else b.max_args
        out.append(f'  X("{b.name}", {b.symbol}, {b.min_args}, {most}) \\')
    out += ["", "/* X(code, bits, name) for each element type (rvm/runtime/dtype_table.py) */",
            "#define RVM_DTYPE_NAMES(X) \\"]
    out += [f'  X({code}, {bits}, "{name}") \\'
            for name, (code, bits) in dtypes.BASE_TYPES.items()]
    out += ["", "#endif /* RVM_VM_CONTRACT_H_ */", ""]
    return "\n".join(out)


def write_contract_header():
    """Writes the header if its text changed (an unchanged one keeps its timestamp);
    returns its path."""
    text = render_contract_header(load_contract())
    if not HEADER.exists() or HEADER.read_text() != text:
        HEADER.parent.mkdir(exist_ok=True)
        HEADER.write_text(text)
    return HEADER
