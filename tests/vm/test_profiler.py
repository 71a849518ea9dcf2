"""profile, set_instrument and time_evaluator."""
import numpy as np

from rvm.bytecode.builder import ExecBuilder
from rvm.runtime.device import cpu
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine
from rvm.vm.profiler import SKIP_RUN

register_func("test.vm.inc", lambda x: x + 1, override=True)


def _chain(n):
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        for i in range(n):
            ib.set_source("main", f"lv{i}")
            ib.emit_call("test.vm.inc", args=[ib.r(i)], dst=ib.r(i + 1))
        ib.set_source(None, None)
        ib.emit_call("helper", args=[ib.r(n)], dst=ib.r(n + 1))
        ib.emit_ret(ib.r(n + 1))
    with ib.function("helper", num_inputs=1):
        ib.emit_call("vm.builtin.copy", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return ib.get()


def test_profile_reports_every_call_site():
    vm = VirtualMachine(_chain(3), cpu())
    report = vm.profile("main", 0)
    assert report.result == 3
    rows = report.rows
    assert sorted((r["callee"], r["function"], r["binding"], r["calls"]) for r in rows) == [
        ("test.vm.inc", "main", "lv0", 1), ("test.vm.inc", "main", "lv1", 1),
        ("test.vm.inc", "main", "lv2", 1), ("vm.builtin.copy", "helper", "", 1)]
    assert all(0 <= r["share"] <= 1 and r["mean"] == r["total"] for r in rows)
    text = str(report)
    assert "callee" in text and "share" in text and "test.vm.inc" in text
    assert vm["main"](1) == 4      # the plain code is back


def test_instrument_sees_and_can_skip_calls():
    vm = VirtualMachine(_chain(2), cpu())
    seen = []

    def instrument(func, name, before, ret, *args):
        seen.append((name, before, ret, args))
        if before and name == "vm.builtin.copy":
            return SKIP_RUN
        return None

    vm.set_instrument(instrument)
    assert vm["main"](10) is None          # the skipped copy leaves None
    assert seen[:2] == [("test.vm.inc", True, None, (10,)), ("test.vm.inc", False, 11, (10,))]
    assert seen[-1] == ("vm.builtin.copy", True, None, (12,))
    vm.set_instrument(None)
    assert vm["main"](10) == 12


def test_time_evaluator():
    vm = VirtualMachine(_chain(2), cpu())
    result = vm.time_evaluator("main", cpu(), number=5, repeat=3)(np.int64(1))
    assert len(result.results) == 3 and result.min > 0 and result.mean >= result.min


def test_module_time_evaluator_and_saved_functions():
    vm = VirtualMachine(_chain(2), cpu())
    result = vm.module.time_evaluator("main", cpu(), number=3)(5)
    assert len(result.results) == 1
    assert vm.module["main"](5) == 7
    vm.save_function("main", "main_saved", 40)
    assert vm["main_saved"]() == 42
    assert vm.module.time_evaluator("main_saved", cpu(), number=2)().mean > 0
