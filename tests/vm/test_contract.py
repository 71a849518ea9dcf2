"""The VM contract: defined once in rvm.bytecode.contract, generated for C, obeyed by both
engines."""
import importlib.util
import pathlib

import pytest

from rvm.bytecode import contract
from rvm.runtime.packed_func import get_global_func

NATIVE = pathlib.Path(__file__).resolve().parents[2] / "native"


def _header_generator():
    spec = importlib.util.spec_from_file_location("vm_contract_header",
                                                  NATIVE / "vm_contract_header.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_built_header_is_the_one_the_contract_gives():
    gen = _header_generator()
    expected = gen.render_contract_header(gen.load_contract())
    assert gen.HEADER.read_text() == expected, (
        "native/generated/rvm_vm_contract.h is stale: rebuild (pip install -e .)")


def test_the_header_spells_every_contract_entry():
    text = _header_generator().render_contract_header(contract)
    for op in contract.OPCODES.values():
        assert f"kRVMOp{op.name.capitalize()} = {op.code}, /* {op.rtl} */" in text
    for name, _ in contract.LINKED_FIELDS:
        assert f"  int32_t {name}; /* " in text
    assert "kRVMMatchEqualHeap = 3," in text and "kRVMMakeLoad = 1," in text
    assert "kRVMCalleeClosure = 3," in text
    for b in contract.C_BUILTINS.values():
        most = -1 if b.max_args is None else b.max_args
        assert f'X("{b.name}", {b.symbol}, {b.min_args}, {most})' in text


@pytest.mark.parametrize("builtin", list(contract.C_BUILTINS.values()), ids=lambda b: b.name)
def test_every_c_builtin_is_registered_with_its_argument_counts(builtin):
    func = get_global_func(builtin.name)
    assert not func.is_python
    if builtin.min_args > 0:
        with pytest.raises(TypeError, match=f"^{builtin.name} takes"):
            func(*[None] * (builtin.min_args - 1))
    if builtin.max_args is not None:
        with pytest.raises(TypeError, match=f"^{builtin.name} takes"):
            func(*[None] * (builtin.max_args + 1))
