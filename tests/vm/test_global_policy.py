"""Which registered globals an executable may call: one built in this process calls any;
one loaded from a file calls the VM builtins and the user's registrations, or the VM
builtins and exactly an allow-list; rvm's internal globals are refused at load and at
VirtualMachine construction, on both engines."""
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.errors import ExecutableFormatError
from rvm.bytecode.executable import Executable
from rvm.runtime.packed_func import (
    global_func_origin, register_func, remove_global_func,
)
from rvm.vm.machine import VirtualMachine

INTERNAL_NAME = "rvm_test.internal_double"
USER_NAME = "rvm_test.user_double"


def _register_as_rvm(name, fn):
    """Registers ``fn`` from code whose module is inside the rvm package (as rvm's own
    compiler or tools register their globals)."""
    scope = {"__name__": "rvm.testing_internal", "register_func": register_func,
             "name": name, "fn": fn}
    exec("register_func(name, fn, override=True)", scope)


@pytest.fixture(autouse=True)
def globals_():
    _register_as_rvm(INTERNAL_NAME, lambda x: x * 2)
    register_func(USER_NAME, lambda x: x * 2, override=True)
    yield
    for name in (INTERNAL_NAME, USER_NAME):
        remove_global_func(name)


def _calling(name):
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call(name, args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def _from_file(name, **kwargs):
    return Executable.from_bytes(_calling(name).save_to_bytes(), where="test.rvm", **kwargs)


def test_origins_are_recorded_at_registration():
    import rvm.codegen.byoc  # noqa: F401  (registers relax.ext.* codegens)
    assert global_func_origin(USER_NAME) == "user"
    assert global_func_origin(INTERNAL_NAME) == "internal"
    assert global_func_origin("relax.ext.ccompiler") == "internal"
    assert global_func_origin("vm.builtin.copy") == "builtin"          # C builtin
    assert global_func_origin("relax.run.print") == "builtin"          # Python builtin
    assert global_func_origin("runtime.random.dropout_mask") == "builtin"
    assert global_func_origin("no.such.function") is None


def test_a_user_registration_overriding_an_internal_name_is_the_users():
    register_func(INTERNAL_NAME, lambda x: x + 1, override=True)
    assert global_func_origin(INTERNAL_NAME) == "user"
    assert VirtualMachine(_from_file(INTERNAL_NAME), rvm.cpu())["main"](1) == 2


def test_an_executable_built_in_process_calls_any_global():
    assert VirtualMachine(_calling(INTERNAL_NAME), rvm.cpu())["main"](4) == 8


def test_a_file_calling_an_internal_global_is_refused_at_load_naming_it():
    with pytest.raises(ExecutableFormatError, match=r"test.rvm: refused: .*\n  "
                       r"'rvm_test.internal_double': it is one of rvm's internal"):
        _from_file(INTERNAL_NAME)


def test_a_compiler_global_is_refused_too():
    import rvm.codegen.byoc  # noqa: F401
    with pytest.raises(ExecutableFormatError, match="'relax.ext.ccompiler'"):
        _from_file("relax.ext.ccompiler")


def test_a_file_calls_user_registrations_and_builtins():
    assert VirtualMachine(_from_file(USER_NAME), rvm.cpu())["main"](4) == 8
    assert VirtualMachine(_from_file("vm.builtin.copy"), rvm.cpu())["main"](4) == 4


def test_the_allow_list_permits_exactly_its_names_and_the_builtins():
    ex = _from_file(INTERNAL_NAME, allow=[INTERNAL_NAME])
    assert VirtualMachine(ex, rvm.cpu())["main"](4) == 8
    with pytest.raises(ExecutableFormatError, match="not in the loader's allow-list"):
        _from_file(USER_NAME, allow=[INTERNAL_NAME])
    assert VirtualMachine(_from_file("vm.builtin.copy", allow=[]), rvm.cpu())["main"](4) == 4


def test_the_allow_list_must_be_names():
    with pytest.raises(TypeError, match="allow must be a list of function names"):
        _from_file(USER_NAME, allow=USER_NAME)


def test_an_internal_global_registered_after_load_is_refused_by_the_vm():
    ex = _from_file("rvm_test.later")
    _register_as_rvm("rvm_test.later", lambda x: x)
    try:
        with pytest.raises(ValueError, match=r"(?s)VirtualMachine: refused: .*'rvm_test.later'"):
            VirtualMachine(ex, rvm.cpu())
    finally:
        remove_global_func("rvm_test.later")


def test_an_env_function_registered_after_load_is_linked():
    ex = _from_file("rvm_test.env_later")
    register_func("rvm_test.env_later", lambda x: x + 10)
    try:
        assert VirtualMachine(ex, rvm.cpu())["main"](1) == 11
    finally:
        remove_global_func("rvm_test.env_later")
