"""Debugger: breakpoints, stepping, registers, the non-finite watch, abandoned calls."""
import gc

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.script import ir as I, relax as R, tir as T
from rvm.vm.machine import VirtualMachine


@I.ir_module
class Model:
    @R.function
    def helper(a: R.Tensor((3,), "float32"), w: R.Tensor((3,), "float32")):
        with R.dataflow():
            h = R.multiply(a, w)
            h2 = R.add(h, a)
            R.output(h2)
        return h2

    @R.function
    def main(cond: R.Tensor((), "bool"), x: R.Tensor((3,), "float32"),
             w: R.Tensor((3,), "float32")):
        cls = Model
        if cond:
            lv0 = R.add(x, x)
            y = cls.helper(lv0, w)
        else:
            lv1 = R.multiply(x, x)
            y = R.add(lv1, x)
        out = R.subtract(y, x)
        return out


_EX = []
X = np.array([0.5, -1.0, 2.0], "float32")
W = np.array([1.0, 3.0, -2.0], "float32")


def _ex():
    if not _EX:
        _EX.append(relax.build(Model))
    return _EX[0]


def _expected(cond, x=X, w=W):
    if cond:
        return (2 * x) * w + 2 * x - x
    return x * x + x - x


def _args(cond, w=W):
    return np.array(cond), X.copy(), w.copy()


def _vm(engine=None):
    return VirtualMachine(_ex(), rvm.cpu(), engine=engine)


def _instr(stop):
    ex = _ex()
    return ex.instructions[ex.function_info(stop.function).start + stop.position]


def _trail(dbg, move, limit=200):
    """(function, binding) at each stop of repeated ``move`` until the call returns, with
    consecutive repeats and unnamed bindings ('_') left out."""
    out = []
    for _ in range(limit):
        stop = move()
        if stop.reason == "done":
            return out
        here = (stop.function, stop.binding)
        if stop.binding != "_" and (not out or out[-1] != here):
            out.append(here)
    raise AssertionError("the call did not return")


def test_breakpoint_by_position_stops_before_that_instruction():
    dbg = _vm().debug()
    dbg.break_at(pc=5)
    assert dbg.start("main", *_args(True)).reason == "start"
    stop = dbg.continue_()
    assert (stop.reason, stop.function, stop.position) == ("breakpoint", "main", 5)
    assert dbg.where() == [("main", 5, stop.binding)]
    assert dbg.continue_().reason == "done"
    np.testing.assert_allclose(dbg.result.numpy(), _expected(True), rtol=1e-6)


def test_breakpoint_by_binding_stops_at_its_first_instruction_in_the_callee():
    dbg = _vm().debug()
    dbg.break_at(binding="h2")
    stop = dbg.run("main", *_args(True))
    assert (stop.reason, stop.function, stop.binding) == ("breakpoint", "helper", "h2")
    ex = _ex()
    start = ex.function_info("helper").start
    assert ex.source_of(start + stop.position - 1)[1] != "h2"   # its first instruction
    assert [f for f, _, _ in dbg.where()] == ["main", "helper"]
    assert dbg.continue_().reason == "done"


def test_breakpoint_by_kernel_and_conditional_breakpoints():
    dbg = _vm().debug()
    number = dbg.break_at(kernel="subtract")
    stop = dbg.run("main", *_args(False))
    assert (stop.reason, stop.kernel, stop.binding) == ("breakpoint", "subtract", "out")
    assert _ex().func_table[_instr(stop).field("func")].name == "subtract"
    dbg.delete(number)
    dbg.break_at(kernel="subtract", when=lambda regs: regs["x"][0] > 100)
    assert dbg.run("main", *_args(False)).reason == "done"           # condition false
    dbg.break_at(kernel="subtract", when=lambda regs: regs["x"][0] == X[0])
    assert dbg.run("main", *_args(False)).reason == "breakpoint"


def test_breakpoint_errors_name_what_was_expected():
    dbg = _vm().debug()
    with pytest.raises(ValueError, match="exactly one of pc, binding, kernel; got none"):
        dbg.break_at()
    with pytest.raises(ValueError, match="no instruction for binding nope"):
        dbg.break_at(binding="nope")
    with pytest.raises(ValueError, match="main has instructions 0"):
        dbg.break_at(pc=10_000)
    with pytest.raises(ValueError, match="no VM function 'nope'"):
        dbg.break_at(pc=0, function="nope")
    with pytest.raises(TypeError, match="when must be callable"):
        dbg.break_at(kernel="subtract", when=3)
    with pytest.raises(RuntimeError, match="call start"):
        dbg.step()
    with pytest.raises(ValueError, match="no breakpoint 7"):
        dbg.delete(7)


STEP_TRAIL = [("main", "y"), ("main", "alloc_storage"), ("main", "alloc"), ("main", "lv0"),
              ("main", "ret"), ("helper", "alloc_storage"), ("helper", "alloc"),
              ("helper", "h2"), ("helper", "return"), ("main", "y"),
              ("main", "alloc3_storage"), ("main", "alloc3"), ("main", "out"),
              ("main", "return")]


def test_step_enters_the_nested_call_and_step_over_does_not():
    dbg = _vm().debug()
    dbg.start("main", *_args(True))
    assert _trail(dbg, dbg.step) == STEP_TRAIL
    np.testing.assert_allclose(dbg.result.numpy(), _expected(True), rtol=1e-6)
    dbg.start("main", *_args(True))
    assert _trail(dbg, dbg.step_over) == [s for s in STEP_TRAIL if s[0] == "main"]
    np.testing.assert_allclose(dbg.result.numpy(), _expected(True), rtol=1e-6)


def test_the_else_branch_steps_through_its_own_bindings():
    dbg = _vm().debug()
    dbg.start("main", *_args(False))
    trail = _trail(dbg, dbg.step)
    assert ("main", "lv1") in trail and all(f == "main" for f, _ in trail)
    assert ("main", "lv0") not in trail
    np.testing.assert_allclose(dbg.result.numpy(), _expected(False), rtol=1e-6)


def test_finish_returns_to_the_caller_after_the_call():
    dbg = _vm().debug()
    dbg.break_at(pc=2, function="helper")
    stop = dbg.run("main", *_args(True))
    assert (stop.function, stop.position) == ("helper", 2)
    stop = dbg.finish()
    assert stop.reason == "finish" and stop.function == "main"
    assert _instr(stop).op.name == "call" and stop.position > 0
    before = _ex().instructions[_ex().function_info("main").start + stop.position - 1]
    assert _ex().func_table[before.field("func")].name == "helper"
    assert dbg.finish().reason == "done"
    with pytest.raises(RuntimeError, match="has returned"):
        dbg.step()


def test_registers_hold_relax_variables_and_agree_between_engines():
    seen = []
    for engine in ("python", "native"):
        dbg = _vm(engine).debug()
        dbg.break_at(binding="h2")
        dbg.run("main", *_args(True))
        dbg.step()
        seen.append(dbg.registers())
        assert dbg.continue_().reason == "done"
    assert seen[0] == seen[1]
    by_var = {r["var"]: r["value"] for r in seen[0]}
    a = 2 * X
    assert by_var["a"] == {"kind": "tensor", "shape": (3,), "dtype": "float32",
                           "min": float(a.min()), "max": float(a.max()),
                           "mean": pytest.approx(float(a.mean())), "nan": 0, "inf": 0}
    h2 = a * W + a
    assert by_var["h2"]["max"] == pytest.approx(float(h2.max()))


def test_register_lookup_and_listing():
    dbg = _vm().debug()
    dbg.break_at(kernel="subtract")
    dbg.run("main", *_args(True))
    np.testing.assert_array_equal(dbg.register("x").numpy(), X)
    np.testing.assert_array_equal(dbg.register(1).numpy(), X)
    with pytest.raises(KeyError, match="no live register 'zz'"):
        dbg.register("zz")
    text = dbg.listing(context=1)
    assert text.splitlines()[0] == "@main"
    marked = [line for line in text.splitlines() if line.startswith("=>")]
    assert len(marked) == 1 and "subtract" in marked[0] and marked[0].endswith("; out")
    assert "x" in dbg.format_registers()


def test_nonfinite_watch_names_the_binding_the_kernel_and_its_inputs():
    w = W.copy()
    w[1] = np.nan
    for engine in ("python", "native"):
        dbg = _vm(engine).debug()
        dbg.watch_nonfinite()
        stop = dbg.run("main", *_args(True, w=w))
        assert (stop.reason, stop.function, stop.binding, stop.kernel) == \
            ("nonfinite", "helper", "h2", "fused_multiply_add")
        assert [i["nan"] for i in stop.detail["inputs"]] == [0, 1]
        assert stop.detail["outputs"][0]["nan"] == 1
        assert dbg.continue_().binding == "y"    # the next call that outputs the NaN
        dbg.watch_nonfinite(False)
        assert dbg.continue_().reason == "done"
        assert np.isnan(dbg.result.numpy()[1])
        dbg.watch_nonfinite()
        # a finite run is not stopped, even with pooled storage that held the NaN
        assert dbg.run("main", *_args(True)).reason == "done"


def test_errors_in_a_stepped_call_match_a_plain_call_and_end_it():
    vm = _vm()
    bad = (np.array(True), np.zeros(4, "float32"), W.copy())
    with pytest.raises(Exception) as plain:
        vm["main"](*bad)
    dbg = vm.debug()
    with pytest.raises(type(plain.value)) as stepped:
        dbg.run("main", *bad)
    assert str(stepped.value) == str(plain.value)
    with pytest.raises(RuntimeError, match="has returned"):
        dbg.step()


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_abandoned_calls_free_their_storage_and_leave_the_vm_usable():
    vm = _vm()
    dbg = vm.debug()
    dbg.break_at(binding="h2")

    def abandon_one():
        assert dbg.run("main", *_args(True)).function == "helper"
        dbg.abandon()

    for _ in range(100):
        abandon_one()
    gc.collect()
    in_use, rss = vm.memory_stats()[0]["vm_bytes_in_use"], _rss()
    for _ in range(1000):
        abandon_one()
    gc.collect()
    assert vm.memory_stats()[0]["vm_bytes_in_use"] == in_use
    assert _rss() - rss < 4 << 20
    np.testing.assert_allclose(vm["main"](*_args(True)).numpy(), _expected(True), rtol=1e-6)
    with pytest.raises(RuntimeError, match="call start"):
        dbg.step()


@rvm.register_func("test.debugger.double", override=True)
def _double(x, out):
    np.multiply(np.from_dlpack(x), 2, out=np.from_dlpack(out))


@I.ir_module
class Packed:
    @R.function
    def main(x: R.Tensor((3,), "float32")):
        with R.dataflow():
            lv = R.call_dps_packed("test.debugger.double", (x,), R.Tensor((3,), "float32"))
            out = R.add(lv, x)
            R.output(out)
        return out


def test_a_destination_passing_packed_call_names_its_output():
    dbg = VirtualMachine(relax.build(Packed), rvm.cpu()).debug()
    dbg.break_at(kernel="add")
    assert dbg.run("main", X.copy()).reason == "breakpoint"
    names = {r["var"]: r["value"] for r in dbg.registers()}
    assert names["lv"]["max"] == pytest.approx(2 * float(X.max()))
    assert dbg.continue_().reason == "done"
    np.testing.assert_allclose(dbg.result.numpy(), 3 * X, rtol=1e-6)


def test_a_debugger_needs_a_virtual_machine():
    from rvm.vm.debugger import Debugger
    with pytest.raises(TypeError, match="Debugger expects a VirtualMachine, got Executable"):
        Debugger(_ex())


def test_bad_arguments_are_refused_as_by_a_plain_call():
    vm = _vm()
    with pytest.raises(TypeError) as plain:
        vm["main"](X)
    with pytest.raises(TypeError) as stepped:
        vm.debug().start("main", X)
    assert str(stepped.value) == str(plain.value)
    with pytest.raises(ValueError, match="no VM function 'nope'"):
        vm.debug().start("nope")


def test_a_failing_condition_leaves_the_call_stopped_where_it_was():
    dbg = _vm().debug()
    number = dbg.break_at(kernel="subtract", when=lambda regs: regs["nope"])
    with pytest.raises(KeyError, match="nope"):
        dbg.run("main", *_args(True))
    stack = dbg.where()
    dbg.delete(number)
    assert dbg.where() == stack and dbg.continue_().reason == "done"
    np.testing.assert_allclose(dbg.result.numpy(), _expected(True), rtol=1e-6)


def test_the_step_limit_and_instrument_apply_to_a_stepped_call():
    from rvm.bytecode.builder import ExecBuilder
    from rvm.vm.profiler import SKIP_RUN
    ib = ExecBuilder()
    with ib.function("spin", num_inputs=1):
        ib.emit_call("vm.builtin.copy", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_goto(-1)
        ib.emit_ret(ib.r(1))
    vm = VirtualMachine(ib.get(), rvm.cpu(), step_limit=50)
    with pytest.raises(RuntimeError) as plain:
        vm["spin"](1)
    dbg = vm.debug()
    with pytest.raises(RuntimeError) as stepped:
        dbg.run("spin", 1)
    assert str(stepped.value) == str(plain.value) and "step_limit of 50" in str(plain.value)
    seen = []

    def instrument(func, name, before, ret, *args):
        seen.append((name, before))
        return SKIP_RUN if before else None

    vm.set_instrument(instrument)
    dbg.start("spin", 1)
    dbg.step()
    assert seen == [("vm.builtin.copy", True)]
    assert [r["reg"] for r in dbg.registers()] == [0]       # the copy was skipped


@I.ir_module
class TwoOutputs:
    @T.prim_func
    def scale_and_shift(x: T.handle, w: T.handle, a: T.handle, b: T.handle):
        X = T.match_buffer(x, (3,), "float32")
        W = T.match_buffer(w, (3,), "float32")
        A = T.match_buffer(a, (3,), "float32")
        B = T.match_buffer(b, (3,), "float32")
        for i in T.grid(3):
            with T.block("AB"):
                vi = T.axis.remap("S", [i])
                A[vi] = X[vi] * W[vi]
                B[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((3,), "float32"), w: R.Tensor((3,), "float32")):
        cls = TwoOutputs
        with R.dataflow():
            lv = R.call_tir(cls.scale_and_shift, (x, w),
                            out_sinfo=[R.Tensor((3,), "float32"), R.Tensor((3,), "float32")])
            a = lv[0]
            b = lv[1]
            R.output(a, b)
        return (b, a)


def test_the_watch_sees_every_output_of_a_multi_output_kernel():
    w = W.copy()
    w[1] = np.nan
    dbg = VirtualMachine(relax.build(TwoOutputs), rvm.cpu()).debug()
    dbg.watch_nonfinite()
    stop = dbg.run("main", X.copy(), w)
    assert stop.reason == "nonfinite" and stop.kernel.endswith("scale_and_shift")
    assert [o["nan"] for o in stop.detail["outputs"]] == [1, 0]   # A (not last) and B
    assert [i["nan"] for i in stop.detail["inputs"]] == [0, 1]    # x, w
    assert dbg.run("main", X.copy(), W.copy()).reason == "done"
