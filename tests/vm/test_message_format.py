"""R.print / R.assert_op messages go through the restricted formatter on both engines: a
format string from an executable cannot reach attributes or items of the values."""
import numpy as np
import pytest

import rvm
from rvm.bytecode.builder import ExecBuilder
from rvm.vm.machine import VirtualMachine
from rvm.vm.message_format import MAX_WIDTH, format_message


def _printing(fmt, builtin="relax.run.print"):
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        args = [ib.r(0)] if builtin == "relax.run.print" else [False, ib.r(0)]
        ib.emit_call(builtin, args=args[:-1] + [fmt, ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(0))
    return VirtualMachine(ib.get(), rvm.cpu())


def test_positional_fields_and_specs_print(capsys):
    _printing("x = {0} / {0:.2f} / {0!r}")["main"](2.5)
    assert capsys.readouterr().out == "x = 2.5 / 2.50 / 2.5\n"


def test_tensors_print_as_numpy(capsys):
    _printing("t = {}")["main"](rvm.nd.array(np.array([1, 2], "int32")))
    assert capsys.readouterr().out == "t = [1 2]\n"


@pytest.mark.parametrize("fmt, why", [
    ("{0.__new__.__globals__}", "attribute and index access are refused"),
    ("{0[0]}", "attribute and index access are refused"),
    ("{x}", "attribute and index access are refused"),
    ("{!a}", "only !s and !r are allowed"),
    ("{:{}}", "nested fields are refused"),
    ("{:%d}" % (MAX_WIDTH + 1), f"more than the {MAX_WIDTH} allowed"),
    ("{:.%d}" % (MAX_WIDTH + 1), "precision"),
    ("{1}", "refers to value 1, but 1 value(s) were given"),
    ("{} {0}", "use {} everywhere or {N} everywhere"),
    ("{", "malformed format string"),
])
def test_print_refuses_other_fields(fmt, why):
    with pytest.raises(ValueError, match="print: ") as err:
        _printing(fmt)["main"](1.5)
    assert why in str(err.value)


def test_assert_op_message_uses_the_same_formatter():
    with pytest.raises(AssertionError, match=r"^value 3\n"):
        _printing("value {}", "relax.run.assert_op")["main"](3)
    with pytest.raises(ValueError, match=r"assert_op: format field '\{0.__class__\}'"):
        _printing("{0.__class__}", "relax.run.assert_op")["main"](3)


def test_a_field_that_names_the_offending_text():
    with pytest.raises(ValueError, match=r"'\{0\.real\.__class__\}' is not allowed"):
        format_message("ok {0} then {0.real.__class__}", [1], "print")


def test_a_spec_the_value_cannot_take_is_a_named_error():
    with pytest.raises(ValueError, match=r"format field '\{:d\}' cannot format a float"):
        format_message("{:d}", [1.5], "print")
