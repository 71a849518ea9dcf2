"""Load cost of executables (load_module + VirtualMachine construction) by size, along each
axis the format's limits bound, up to the largest file they allow.

    python benchmarks/bench_load.py [--rounds 5] [--axes chain,blocks,...]

Each file is valid (it passes the verifier) and is built in memory here. Each load runs in
a fresh subprocess that imports rvm, then times ``load_module(path)`` followed by
``VirtualMachine(ex, cpu(), engine=...)`` and reports the process's peak resident memory
(``ru_maxrss``, imports included). The table gives, per axis, size and engine, the median
and range over the rounds, and the time per unit of size, which stays flat when the cost
is linear. Axes:

- chain: n VM functions, each calling the next (the call graph the recursion check walks);
- function: one function of n calls, each writing a new register from the last;
- blocks: one function of n basic blocks, each reading the register the previous block
  wrote (the worst case of the register dataflow: n blocks x n registers);
- jumps: one function of n GOTOs (the most instructions the code limit allows);
- strings: n string constants; tensor: one tensor constant of n bytes;
- largest: every limit at once (functions, code words, constants, source map, file bytes).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rvm.bytecode.contract import CALL, GOTO, IF, RET, ArgKind  # noqa: E402
from rvm.bytecode.function import FuncInfo, FuncKind  # noqa: E402
from rvm.bytecode.instruction import Arg, Instruction, encode_instruction  # noqa: E402
from rvm.bytecode.serialize import LIMITS, MAX_FILE_BYTES, dump_executable  # noqa: E402
from rvm.runtime.ndarray import array  # noqa: E402

ENGINES = ("native", "python")
COPY = FuncInfo(FuncKind.PACKED, "vm.builtin.copy")
CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
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
ex = rvm.runtime.load_module(sys.argv[1])
VirtualMachine(ex, cpu(), engine=sys.argv[2])
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds,
                  "peak_mb": peak_mb()}))
"""


def reg(i):
    return Arg(ArgKind.REG, i)


def parts(functions, code, constants=(), source_map=None):
    return {"functions": functions, "constants": list(constants), "code": code,
            "modules": [], "source_map": source_map or {}}


def chain(n):
    """n VM functions f0 -> f1 -> ... (7 words each)."""
    table, code = [], []
    for i in range(n):
        start = len(code)
        if i + 1 < n:
            code += [Instruction(CALL, (1, i + 1, (reg(0),))), Instruction(RET, (1,))]
        else:
            code.append(Instruction(RET, (0,)))
        table.append(FuncInfo(FuncKind.VM, f"f{i}", start, len(code), 1, 2, ("x",)))
    return parts(table, code)


def function(n):
    """main(%0): %k+1 = copy(%k) for k < n; return %n (5 words per call)."""
    code = [Instruction(CALL, (k + 1, 1, (reg(k),))) for k in range(n)]
    code.append(Instruction(RET, (n,)))
    return parts([FuncInfo(FuncKind.VM, "main", 0, n + 1, 1, n + 1, ("x",)), COPY], code)


def blocks(n):
    """main(%0): n blocks, block k: %k+1 = copy(%k); if %k+1 -> next (8 words per block)."""
    code = []
    for k in range(n):
        code += [Instruction(CALL, (k + 1, 1, (reg(k),))), Instruction(IF, (k + 1, 1))]
    code.append(Instruction(RET, (n,)))
    return parts([FuncInfo(FuncKind.VM, "main", 0, len(code), 1, n + 1, ("x",)), COPY], code)


def jumps(n):
    """main(%0): n GOTOs to the next instruction, then return %0 (2 words each)."""
    code = [Instruction(GOTO, (1,)) for _ in range(n)] + [Instruction(RET, (0,))]
    return parts([FuncInfo(FuncKind.VM, "main", 0, n + 1, 1, 1, ("x",))], code)


def strings(n):
    """main returns its argument; n distinct string constants."""
    return parts([FuncInfo(FuncKind.VM, "main", 0, 1, 1, 1, ("x",))],
                 [Instruction(RET, (0,))], [f"constant number {i}" for i in range(n)])


def tensor(n):
    """main returns its argument; one uint8 tensor constant of n bytes."""
    return parts([FuncInfo(FuncKind.VM, "main", 0, 1, 1, 1, ("x",))],
                 [Instruction(RET, (0,))], [array(np.full(n, 7, dtype=np.uint8))])


def largest(_):
    """Every limit at once: LIMITS["functions"] - 2 chained functions, then one function
    of blocks (as in ``blocks``) filling the code words, as many string constants and
    source-map entries as allowed, and a tensor constant filling the file up to
    MAX_FILE_BYTES."""
    nfuncs = LIMITS["functions"]
    head = chain(nfuncs - 2)
    table, code = head["functions"], head["code"]
    copy = nfuncs - 1  # the table ends with main, then vm.builtin.copy
    words = sum(len(encode_instruction(i)) for i in code)
    n = (LIMITS["code"] - words - 2) // 8
    start = len(code)
    for k in range(n):
        code += [Instruction(CALL, (k + 1, copy, (reg(k),))), Instruction(IF, (k + 1, 1))]
    code.append(Instruction(RET, (n,)))
    table += [FuncInfo(FuncKind.VM, "main", start, len(code), 1, n + 1, ("x",)), COPY]
    source_map = {pc: (f"fn{pc % 97}", f"binding_{pc}")
                  for pc in range(min(len(code), LIMITS["source_map"]))}
    constants = [f"constant number {i}" for i in range(LIMITS["constants"] - 1)]
    empty = array(np.zeros(0, np.uint8))
    small = dump_executable(parts(table, code, constants + [empty], source_map))
    constants.append(array(np.full(MAX_FILE_BYTES - len(small) - 16, 7, dtype=np.uint8)))
    return parts(table, code, constants, source_map)


AXES = {
    "chain": (chain, "functions", LIMITS["functions"]),
    "function": (function, "instructions", (LIMITS["code"] - 2) // 5),
    "blocks": (blocks, "blocks", (LIMITS["code"] - 2) // 8),
    "jumps": (jumps, "instructions", LIMITS["code"] // 2 - 1),
    "strings": (strings, "constants", LIMITS["constants"]),
    "tensor": (tensor, "bytes", MAX_FILE_BYTES - 4096),
    "largest": (largest, "file", 1),
}


def measure(path, engine):
    out = subprocess.run([sys.executable, "-c", CHILD, path, engine, str(ROOT)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"loading {path} on {engine} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def sizes(limit, steps):
    return sorted({max(1, limit >> k) for k in range(steps)})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=4, help="sizes per axis: limit/2^k")
    parser.add_argument("--axes", default=",".join(AXES))
    args = parser.parse_args()
    print(f"{'axis':9} {'size':>9} {'file KB':>8} {'engine':7} {'seconds (median, range)':>26} "
          f"{'us/unit':>8} {'peak MB (median, range)':>26}")
    with tempfile.TemporaryDirectory() as tmp:
        for axis in args.axes.split(","):
            build, unit, limit = AXES[axis]
            for n in sizes(limit, 1 if axis == "largest" else args.steps):
                path = os.path.join(tmp, f"{axis}_{n}.rvm")
                data = dump_executable(build(n))
                pathlib.Path(path).write_bytes(data)
                for engine in ENGINES:
                    runs = [measure(path, engine) for _ in range(args.rounds)]
                    secs = [r["seconds"] for r in runs]
                    mem = [r["peak_mb"] for r in runs]
                    per = statistics.median(secs) / n * 1e6
                    print(f"{axis:9} {n:>9} {len(data) / 1024:>8.0f} {engine:7} "
                          f"{statistics.median(secs):>8.3f} [{min(secs):.3f}, {max(secs):.3f}]"
                          f"{'':>3} {per:>8.2f} {statistics.median(mem):>8.0f} "
                          f"[{min(mem):.0f}, {max(mem):.0f}]", flush=True)


if __name__ == "__main__":
    main()
