"""Shared executables for the bytecode tests."""
import numpy as np

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.container import ShapeTuple
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.runtime.module import Module, register_module_loader


class NamesModule(Module):
    """A saveable test module whose functions return their own name."""

    type_key = "test.names"

    def __init__(self, names):
        super().__init__()
        self.names = list(names)

    def _get_own_function(self, name):
        return (lambda *args: name) if name in self.names else None

    def _own_function_names(self):
        return self.names

    def save_to_bytes(self):
        return ",".join(self.names).encode()


def _load_names(data):
    text = data.decode()
    if not all(part.isidentifier() for part in text.split(",")):
        raise ValueError("names module: bad name list")
    return NamesModule(text.split(","))


register_module_loader("test.names", _load_names)


def build_rich_executable():
    """An executable using every section: all constant kinds, modules, a source map."""
    ib = ExecBuilder()
    consts = [np.arange(6, dtype="float32").reshape(2, 3), np.zeros((0, 2), "int8"),
              np.array(True), ShapeTuple((1, 2)), "text", b"\x00\xff", -5, 1 << 62, 2.5,
              True, None, DataType("float16"), cpu(0)]
    with ib.function("main", num_inputs=2, param_names=["x", "y"]):
        ib.set_source("main", "lv0")
        ib.emit_call("kernel_a", args=[ib.r(0), ib.r(1)] + [ib.c(ib.convert_constant(c))
                                                           for c in consts], dst=ib.r(2))
        ib.set_source(None, None)
        skip = ib.label()
        ib.emit_if(ib.r(2), skip)
        ib.emit_call("helper", args=[ib.r(2)], dst=ib.r(2))
        ib.bind(skip)
        ib.emit_ret(ib.r(2))
    with ib.function("helper", num_inputs=1):
        ib.emit_call("test.bytecode.pick", args=[ib.r(0), ib.vm_state(), ib.f("main")],
                     dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    ib.add_kernel_library(NamesModule(["kernel_a"]))
    ib.import_module(NamesModule(["other"]))
    return ib.get()
