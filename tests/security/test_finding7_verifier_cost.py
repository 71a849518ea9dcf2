"""Finding 7: the load-time verifier was quadratic (16,000 chained functions, 452 KB, took
53 s to load) and kept a bitset of num_regs bits per instruction (a 48 KB file used
1.1 GB). Each hostile file below, and the largest of its shape the format's limits allow,
now loads (load_module, then VirtualMachine on each engine) or is refused with a named
error, within a few seconds and 300 MB, measured in a fresh subprocess."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rvm.bytecode.contract import CALL, GOTO, IF, RET, ArgKind
from rvm.bytecode.function import FuncInfo, FuncKind
from rvm.bytecode.instruction import Arg, Instruction
from rvm.bytecode.serialize import LIMITS, dump_executable
from rvm.bytecode.verify import MAX_REGS
from tests.security.attack import ENGINES, run_untrusted

SECONDS = 3.0
PEAK_MB = 300
COND = FuncInfo(FuncKind.PACKED, "vm.builtin.read_if_cond")
_MEASURE = """
import json, resource, sys, time
def peak_mb():
    # VmHWM starts afresh at exec; ru_maxrss would include the parent's pages at fork
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


import rvm
from rvm.runtime.device import cpu
from rvm.vm.machine import VirtualMachine
start = time.perf_counter()
try:
    VirtualMachine(rvm.runtime.load_module(sys.argv[1]), cpu(), engine=sys.argv[2])
    error = None
except Exception as err:
    error = f"{type(err).__name__}: {err}"
print(json.dumps({"seconds": time.perf_counter() - start, "error": error,
                  "peak_mb": peak_mb()}))
"""


def reg(i):
    return Arg(ArgKind.REG, i)


def save(tmp_path, table, code):
    path = tmp_path / "hostile.rvm"
    path.write_bytes(dump_executable({"functions": table, "constants": [], "code": code,
                                      "modules": [], "source_map": {}}))
    return path


def load_cost(path, engine):
    """{seconds, peak_mb, error} of load_module + VirtualMachine in a fresh process."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(path), engine],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    cost = json.loads(out.stdout.strip().splitlines()[-1])
    assert cost["seconds"] < SECONDS and cost["peak_mb"] < PEAK_MB, cost
    return cost


def chain(n):
    """f0 -> f1 -> ... -> f(n-1), each passing its argument on (the finding's shape)."""
    table, code = [], []
    for i in range(n):
        start = len(code)
        if i + 1 < n:
            code += [Instruction(CALL, (1, i + 1, (reg(0),))), Instruction(RET, (1,))]
        else:
            code.append(Instruction(RET, (0,)))
        table.append(FuncInfo(FuncKind.VM, f"f{i}", start, len(code), 1, 2, ("x",)))
    return table, code


@pytest.mark.parametrize("engine", ENGINES)
def test_sixteen_thousand_chained_functions_are_refused_at_once(tmp_path, engine):
    path = save(tmp_path, *chain(16_000))
    cost = load_cost(path, engine)
    assert cost["error"] == (f"ExecutableFormatError: {path}: section 'functions' has 16000 "
                             f"entries, over the limit of {LIMITS['functions']}")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_longest_chain_the_limits_allow_loads_and_runs(tmp_path, engine):
    path = save(tmp_path, *chain(LIMITS["functions"]))
    assert load_cost(path, engine)["error"] is None
    result = run_untrusted(path, [np.arange(3, dtype="float32")], engine=engine, func="f0")
    assert result.returncode == 0 and "RAN [0.0, 1.0, 2.0]" in result.stdout, result.stdout


def top_register_blocks():
    """The per-instruction bitset shape: a frame of MAX_REGS registers whose top one is
    written first (the truth of the argument), then as many blocks reading it as the code
    words allow."""
    top = MAX_REGS - 1
    n = (LIMITS["code"] - 5 - 2) // 3
    code = [Instruction(CALL, (top, 1, (reg(0),)))]
    code += [Instruction(IF, (top, 1)) for _ in range(n)] + [Instruction(RET, (top,))]
    return [FuncInfo(FuncKind.VM, "main", 0, len(code), 1, MAX_REGS, ("x",)), COND], code


def most_blocks_times_registers():
    """The most block-state bits a file within the limits can ask for: D blocks each
    reading the register the previous one wrote (D registers to track; the truth of the
    argument passed on), then GOTO blocks
    filling the code words; D = 5461 makes blocks x registers the largest."""
    d, code = 5461, []
    for k in range(d):
        code += [Instruction(CALL, (k + 1, 1, (reg(k),))), Instruction(IF, (k + 1, 1))]
    gotos = (LIMITS["code"] - 8 * d - 2) // 2
    code += [Instruction(GOTO, (1,)) for _ in range(gotos)] + [Instruction(RET, (d,))]
    return [FuncInfo(FuncKind.VM, "main", 0, len(code), 1, d + 1, ("x",)), COND], code


@pytest.mark.parametrize("shape", [top_register_blocks, most_blocks_times_registers])
@pytest.mark.parametrize("engine", ENGINES)
def test_files_shaped_to_blow_up_register_bitsets_load_in_bounds(tmp_path, engine, shape):
    path = save(tmp_path, *shape())
    assert load_cost(path, engine)["error"] is None
    result = run_untrusted(path, [np.ones(1, dtype="float32")], engine=engine)
    assert result.returncode == 0 and "RAN True" in result.stdout, result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_many_functions_over_one_range_are_refused(tmp_path, engine):
    # Each of 4,000 functions covering the same 4,000 instructions would make checking
    # quadratic (16 million instruction checks) while the file stays small.
    n = 4000
    code = [Instruction(GOTO, (1,)) for _ in range(n - 1)] + [Instruction(RET, (0,))]
    table = [FuncInfo(FuncKind.VM, f"f{i}", 0, n, 1, 1, ("x",)) for i in range(n)]
    cost = load_cost(save(tmp_path, table, code), engine)
    assert "the VM functions' code ranges cover 16000000 instructions in all, over the " \
           "limit of 65536" in cost["error"], cost
