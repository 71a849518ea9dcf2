"""SPEC §4: a hand-built executable is saved, loaded in a fresh process and run there."""
import json
import pathlib
import subprocess
import sys

import numpy as np

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import get_global_func, register_func, remove_global_func
from rvm.vm.machine import VirtualMachine

ROOT = pathlib.Path(__file__).resolve().parents[2]

KERNELS = """
import numpy as np
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import get_global_func, register_func, remove_global_func
register_func("test.e2e.add", lambda a, b: array(a.numpy() + b.numpy()), override=True)
register_func("test.e2e.scale", lambda a, k: array(a.numpy() * k), override=True)
"""
exec(KERNELS)

CHILD = KERNELS + """
import json, sys
import rvm.bytecode.executable  # registers the executable file format
from rvm.runtime.loader import load_module
from rvm.vm.machine import VirtualMachine
ex = load_module(sys.argv[1])
vm = VirtualMachine(ex)
a, b = np.arange(4, dtype="float32"), np.ones(4, dtype="float32")
out = vm["main"](a, b)
print(json.dumps({"text": ex.as_text(), "out": out.numpy().tolist(),
                  "type": type(ex).__name__}))
"""


def _program():
    ib = ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["a", "b"]):
        ib.emit_call("test.e2e.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_call("twice", args=[ib.r(2)], dst=ib.r(3))
        ib.emit_call("test.e2e.scale", args=[ib.r(3), ib.c(ib.convert_constant(0.5))],
                     dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    with ib.function("twice", num_inputs=1):
        ib.emit_call("test.e2e.add", args=[ib.r(0), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_save_then_load_in_a_fresh_process(tmp_path):
    ex = _program()
    a, b = np.arange(4, dtype="float32"), np.ones(4, dtype="float32")
    expected = VirtualMachine(ex, cpu())["main"](array(a), array(b)).numpy()
    path = tmp_path / "prog.rvm"
    ex.export_library(str(path))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    assert child["type"] == "Executable"
    assert child["text"] == ex.as_text()
    np.testing.assert_array_equal(np.array(child["out"], "float32"), expected)
    np.testing.assert_array_equal(expected, (a + b) * 2 * 0.5)


def test_spec_program_as_written():
    previous = get_global_func("test.vm.add", allow_missing=True)
    register_func("test.vm.add", lambda x, y: array(x.numpy() + y.numpy()), override=True)
    try:
        ib = ExecBuilder()
        with ib.function("func0", num_inputs=2):
            ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
            ib.emit_ret(ib.r(2))
        ex = ib.get()
        a, b = array(np.ones((2, 2), "float32")), array(np.full((2, 2), 2, "float32"))
        out = VirtualMachine(ex, cpu())["func0"](a, b)
        np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3))
    finally:
        if previous is None:
            remove_global_func("test.vm.add")
        else:
            register_func("test.vm.add", previous, override=True)
