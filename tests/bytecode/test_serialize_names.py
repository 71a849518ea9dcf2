"""Callee names with NUL or other non-printable characters are refused when a file is read:
they would be cut short in C (a NUL-terminated lookup) or forge lines in error messages."""
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.executable import Executable
from rvm.bytecode.serialize import dump_executable, undump_executable


def _calling(name):
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call(name, args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


@pytest.mark.parametrize("name, char", [("vm.builtin.copy\x00evil", r"'\\x00'"),
                                        ("env.f\nin VM function 'x'", r"'\\n'"),
                                        ("env.\x1b[2Jf", r"'\\x1b'")])
def test_non_printable_function_names_are_refused(name, char):
    data = _calling(name).save_to_bytes()
    with pytest.raises(ExecutableFormatError, match=r"corrupted section 'functions': entry 1: "
                       r"name .* holds the non-printable character " + char):
        Executable.from_bytes(data)


def test_non_printable_module_type_keys_are_refused():
    parts = undump_executable(_calling("vm.builtin.copy").save_to_bytes())
    parts["modules"] = [("import", "c_kernels\x00", b"")]
    with pytest.raises(ExecutableFormatError, match=r"'modules': entry 0: type_key"):
        undump_executable(dump_executable(parts))


def test_printable_names_load():
    ex = Executable.from_bytes(_calling("vm.builtin.copy").save_to_bytes())
    assert [f.name for f in ex.func_table] == ["main", "vm.builtin.copy"]


@pytest.mark.parametrize("field", ["start", "end", "num_args", "num_regs"])
def test_function_fields_beyond_int32_are_refused(field):
    # Found by the loader fuzz: a packed entry with start = 2^40 loaded, and the native
    # engine's link then raised OverflowError (its function table holds C ints).
    parts = undump_executable(_calling("vm.builtin.copy").save_to_bytes())
    parts["functions"][1] = parts["functions"][1]._replace(**{field: 1 << 40})
    with pytest.raises(ExecutableFormatError, match=r"corrupted section 'functions': function "
                       r"'vm.builtin.copy': start, end, num_args, num_regs must be ints in "
                       r"\[0, 2147483647\]"):
        undump_executable(dump_executable(parts))
