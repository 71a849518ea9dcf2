"""The native engine's call overhead now against an earlier commit, measured in one session.

    python benchmarks/bench_vm_against.py REV [--runs 5]

Absolute figures on a shared machine move by 2x within an hour, so a regression
check compares two builds side by side: REV's tree is taken with ``git archive``
into a temporary directory and its native runtime compiled in place; then each
tree's measurement runs in its own process, alternating (REV, now, REV, now, ...),
``--runs`` times each. A measurement is bench_vm's identity call (us per call) and
the added cost of a call to a no-op Python and C callee (ns per instruction, from
the chain of 10 calls), each the fastest of 60 repeats of 5,000 calls in thread
CPU time, which time-slicing by other processes does not inflate. Printed: every
run, then the median per tree and now / REV.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
MEASURES = ("identity us", "py-callee ns", "c-callee ns")

MEASURE = r"""
import sys, tempfile, time, timeit
import numpy as np
sys.path.insert(0, "benchmarks")
import rvm, bench_vm
assert rvm.__file__.startswith(sys.argv[1]), rvm.__file__
from rvm.runtime.device import cpu
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import register_func
from rvm.vm.machine import VirtualMachine
register_func("bench.py_noop", lambda x, out: None, override=True)
with tempfile.TemporaryDirectory() as tmp:
    bench_vm.build_c_noop(tmp)
vm = VirtualMachine(bench_vm.build_executable(), cpu(), engine="native")
x, out = array(np.zeros(4, "float32")), array(np.zeros(4, "float32"))
def best(fn, *args, number=5000):
    runs = timeit.repeat(lambda: fn(*args), number=number, repeat=60, timer=time.thread_time)
    return min(runs) / number * 1e6
ident = best(vm["identity"], x)
py = (best(vm["chain_py_noop"], x, out) - ident) / bench_vm.CHAIN * 1e3
c = (best(vm["chain_c_noop"], x, out) - ident) / bench_vm.CHAIN * 1e3
print(ident, py, c)
"""


def tree_of(rev, into):
    """REV's files under ``into`` with the native runtime built in place."""
    tree = pathlib.Path(into) / "tree"
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--prefix=tree/", rev],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(into)], input=archive, check=True)
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=tree,
                   check=True, capture_output=True)
    return tree


def measure(tree):
    out = subprocess.run([sys.executable, "-c", MEASURE, str(tree)], cwd=tree, check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tree)}).stdout
    return [float(v) for v in out.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the earlier commit (any git revision)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rvm-bench-against-") as tmp:
        trees = {args.rev: tree_of(args.rev, tmp), "now": ROOT}
        figures = {label: [] for label in trees}
        print(f"{'build':>12} " + " ".join(f"{m:>13}" for m in MEASURES))
        for _ in range(args.runs):
            for label, tree in trees.items():
                figures[label].append(measure(tree))
                print(f"{label:>12} " + " ".join(f"{v:>13.3f}" for v in figures[label][-1]))
    medians = {label: [statistics.median(run[k] for run in runs) for k in range(len(MEASURES))]
               for label, runs in figures.items()}
    print("medians")
    for label, values in medians.items():
        print(f"{label:>12} " + " ".join(f"{v:>13.3f}" for v in values))
    print(f"{'now / ' + args.rev[:6]:>12} " + " ".join(
        f"{n / b:>13.2f}" for n, b in zip(medians["now"], medians[args.rev])))


if __name__ == "__main__":
    main()
