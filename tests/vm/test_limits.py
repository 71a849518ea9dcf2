"""Run-time limits met by hostile programs: each a clear error, never a crash (both engines)."""
import numpy as np
import pytest

from rvm.bytecode.builder import ExecBuilder
from rvm.bytecode.contract import MAX_CALL_DEPTH
from rvm.runtime.data_type import DataType
from rvm.runtime.device import cpu
from rvm.vm.machine import VirtualMachine


def _program():
    ib = ExecBuilder()
    f64 = ib.c(ib.convert_constant(DataType("float64")))
    with ib.function("alloc", num_inputs=1):
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), ib.r(0), 0, f64],
                     dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with ib.function("nest", num_inputs=1):  # given 0, calls itself without end
        done = ib.label()
        ib.emit_call("vm.builtin.read_if_cond", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_if(ib.r(1), done)
        ib.emit_ret(ib.r(0))
        ib.bind(done)
        ib.emit_call("nest", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("hoard", num_inputs=1):  # holds a 1 MiB storage per level, without end
        ib.emit_call("vm.builtin.alloc_storage", args=[ib.vm_state(), 1 << 17, 0, f64],
                     dst=ib.r(1))
        ib.emit_call("hoard", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("spin", num_inputs=1):  # loops while its argument is true
        top, done = ib.label(), ib.label()
        ib.bind(top)
        ib.emit_if(ib.r(0), done)
        ib.emit_goto(top)
        ib.bind(done)
        ib.emit_ret(ib.r(0))
    return ib.get()


def test_a_petabyte_allocation_is_a_memory_error():
    vm = VirtualMachine(_program(), cpu())
    with pytest.raises(MemoryError, match="alloc_storage: cannot allocate 1000000000000000 "
                                          "bytes"):
        vm["alloc"](125_000_000_000_000)  # float64 elements: 1e15 bytes
    with pytest.raises(ValueError, match="overflow"):
        vm["alloc"](1 << 62)
    assert vm["alloc"](4) is not None  # the VM still works


def test_unbounded_nesting_hits_the_depth_limit():
    vm = VirtualMachine(_program(), cpu())
    with pytest.raises(RecursionError, match=f"VM call depth exceeded {MAX_CALL_DEPTH}"):
        vm["nest"](0)  # would nest forever: stopped at MAX_CALL_DEPTH (10^5) frames
    assert vm["nest"](1) == 1  # the frame stack unwound


@pytest.mark.parametrize("memory_cfg", ["pooled", "naive"])
def test_the_memory_limit_bounds_what_the_vm_holds(memory_cfg):
    vm = VirtualMachine(_program(), cpu(), memory_cfg=memory_cfg, memory_limit=1 << 20)
    kept = vm["alloc"](100_000)  # 800,000 bytes of float64
    with pytest.raises(MemoryError, match="would exceed the VM's memory_limit of 1048576 bytes"):
        vm["alloc"](50_000)
    assert vm.memory_stats()[0]["vm_bytes_in_use"] >= 800_000
    del kept
    for _ in range(5):  # a freed storage is reused (pooled) or no longer counted (naive)
        assert vm["alloc"](100_000) is not None
    with pytest.raises(MemoryError, match="memory_limit"):
        vm["alloc"](125_000_000_000_000)  # 1e15 bytes: refused before asking the system


def test_a_program_hoarding_memory_stops_at_the_limit():
    vm = VirtualMachine(_program(), cpu(), memory_limit=16 << 20)
    with pytest.raises(MemoryError, match="memory_limit of 16777216 bytes"):
        vm["hoard"](0)  # without the limit: 10^5 levels of 1 MiB before the depth limit
    assert vm.memory_stats()[0]["vm_bytes_in_use"] <= 16 << 20
    assert vm["alloc"](1 << 17) is not None  # the VM still works: a pooled storage reused


def test_the_step_limit_stops_an_endless_loop():
    vm = VirtualMachine(_program(), cpu(), step_limit=10_000)
    with pytest.raises(RuntimeError, match="exceeded its step_limit of 10000 steps") as info:
        vm["spin"](True)
    assert "spin" in "".join(getattr(info.value, "__notes__", []))  # where it stopped
    assert vm["spin"](False) is False  # each run has its own budget
    with pytest.raises(RuntimeError, match="step_limit of 10000"):
        vm["nest"](0)  # VM calls are steps too: stopped before the depth limit


@pytest.mark.parametrize("name, value", [("memory_limit", 0), ("memory_limit", -1),
                                         ("memory_limit", "1GB"), ("step_limit", 1.5),
                                         ("step_limit", True), ("step_limit", 1 << 63)])
def test_a_bad_limit_is_refused(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a positive number"):
        VirtualMachine(_program(), cpu(), **{name: value})


def test_the_step_limit_stops_a_recursive_relax_function_that_never_ends():
    from rvm import relax
    from rvm.script import ir as I, relax as R

    @I.ir_module
    class Doubling:
        @R.function
        def twice(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
            cls = Doubling  # calls itself twice on n - 1 until n is 0: 2^n calls
            if R.greater(n, R.const(0, "int64")):
                m = R.subtract(n, R.const(1, "int64"))
                r = R.add(cls.twice(m), cls.twice(m))
            else:
                r = R.const(1, "int64")
            return r

    vm = relax.VirtualMachine(relax.build(Doubling, target="llvm"), cpu(), step_limit=5_000)
    assert vm["twice"](np.array(8, "int64")).numpy() == 256
    with pytest.raises(RuntimeError, match="step_limit of 5000"):
        vm["twice"](np.array(60, "int64"))  # 2^60 calls: would run for centuries


def test_the_time_limit_stops_an_endless_loop_and_each_run_has_its_own():
    import time
    vm = VirtualMachine(_program(), cpu(), time_limit=0.2)
    start = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"^VM run exceeded its time_limit of 0.2 s\n"):
        vm["spin"](True)
    assert 0.2 <= time.perf_counter() - start < 1.0
    assert vm["spin"](False) is False  # the next run starts a new clock
    with pytest.raises(TimeoutError, match="time_limit of 0.2 s"):
        vm["spin"](True)


def test_the_time_limit_is_wall_time_and_holds_under_load():
    """time_limit counts wall-clock seconds (one watchdog thread on CLOCK_MONOTONIC sets the
    run's cancel flag, which both engines read at each step), not the run's CPU time: with
    a CPU-bound competitor on the machine the run stops within its margin of the limit,
    however little CPU it got."""
    import subprocess
    import sys
    import time
    competitor = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        vm = VirtualMachine(_program(), cpu(), time_limit=0.3)
        start, used = time.monotonic(), time.thread_time()
        with pytest.raises(TimeoutError, match="time_limit of 0.3 s"):
            vm["spin"](True)
        wall, used = time.monotonic() - start, time.thread_time() - used
    finally:
        competitor.kill()
        competitor.wait()
    assert 0.3 <= wall < 1.3, (wall, used)
    assert used <= wall + 0.01


@pytest.mark.parametrize("value", [0, -1.0, "1s", True, float("nan"), float("inf")])
def test_a_bad_time_limit_is_refused(value):
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        VirtualMachine(_program(), cpu(), time_limit=value)


def test_the_time_limit_works_in_a_forked_child():
    import os
    import signal
    vm = VirtualMachine(_program(), cpu(), time_limit=0.1)
    with pytest.raises(TimeoutError):
        vm["spin"](True)  # the parent's watchdog thread runs now
    pid = os.fork()
    if pid == 0:  # the child has no watchdog thread: its first timed run starts one
        code = 1
        signal.alarm(10)  # a child that hangs dies of SIGALRM, failing the test
        try:
            vm["spin"](True)
        except TimeoutError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
