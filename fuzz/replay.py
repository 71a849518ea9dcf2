"""Replays inputs a campaign saved (``<crash-dir>/*.input``) the way a TIR or loader child
runs them, and times each step: ``python fuzz/replay.py FILE... [--asan]``.

For each file: the load (the format, the verifiers, regenerating the kernels' C, the
compile) and then ``main`` on both engines under the campaign's VM limits, with the inputs
of the TIR seed whose kernels it shares most names with (the saved file does not record
its seed; a file matching none gets the loader campaign's vector). Prints a line per step with its
wall and CPU seconds (the compiler's included), and the stage the campaign would count.
``--asan`` compiles under AddressSanitizer as ``fuzz_loader.py --asan`` does (re-executing
with libasan preloaded).
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzz.child import cpu_ns  # noqa: E402


class _Clock:
    def __init__(self):
        self.wall, self.cpu = time.monotonic(), cpu_ns() / 1e9

    def lap(self, what, outcome):
        wall, cpu = time.monotonic(), cpu_ns() / 1e9
        print(f"  {what:<16} {wall - self.wall:7.2f} s wall {cpu - self.cpu:7.2f} s cpu  "
              f"{outcome}", flush=True)
        self.wall, self.cpu = wall, cpu


def _arguments(data, ex):
    """The inputs of the TIR seed sharing most kernel names with ``data``."""
    import numpy as np
    from fuzz.tir_seeds import tir_seeds
    from tests.security.attack import kernel_tir
    try:
        names = {name for name, _ in kernel_tir(data)}
    except Exception:  # the stored TIR did not decode again: no names to match
        names = set()
    wanted = ex.function_info("main").num_args
    best, best_shared = None, 0
    for _, seed, inputs in _SEEDS.setdefault("tir", tir_seeds()):
        shared = len(names & {name for name, _ in kernel_tir(seed)})
        if len(inputs) == wanted and shared > best_shared:
            best, best_shared = inputs, shared
    return list(best) if best else [np.arange(8, dtype="float32")] * wanted


_SEEDS = {}


def replay(path):
    """Loads and runs one saved input, printing the time of each step."""
    from fuzz.child import ENGINES, VM_LIMITS
    from fuzz.stages import InternalError, check_run_error, load_stage
    from rvm.bytecode.executable import Executable
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine
    with open(path, "rb") as f:
        data = f.read()
    print(f"{path} ({len(data)} bytes)")
    clock = _Clock()
    try:
        ex = Executable.from_bytes(data, "fuzz")
    except Exception as err:
        try:
            stage = load_stage(err)
        except InternalError as internal:
            stage = "internal_errors: " + internal.key()
        clock.lap("load", f"{stage}: {str(err).splitlines()[0][:100] if str(err) else ''}")
        return
    clock.lap("load", "loaded")
    args = _arguments(data, ex)
    for engine in ENGINES:
        try:
            vm = VirtualMachine(ex, cpu(), engine=engine, **VM_LIMITS)
            vm["main"](*args)
            outcome = "ran"
        except Exception as err:
            try:
                check_run_error(err, engine)
                outcome = f"{type(err).__name__}: {str(err)[:100]}"
            except InternalError as internal:
                outcome = "internal_errors: " + internal.key()
        clock.lap(f"run ({engine})", outcome)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--asan", action="store_true")
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)
    if args.asan and "RVM_FUZZ_REPLAY_ASAN" not in os.environ:
        from fuzz.asan import asan_env
        logs = tempfile.mkdtemp(prefix="rvm-replay-asan-")
        env = dict(os.environ, RVM_FUZZ_REPLAY_ASAN=logs,
                   **asan_env(logs, args.memory_mb))
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]],
                  env)
    from fuzz.asan import started_under_asan
    from fuzz.child import campaign_limits
    started_under_asan()
    campaign_limits()
    import rvm.relax  # noqa: F401  (registers the builtins the seeds' kernels may call)
    import rvm.vm.machine  # noqa: F401
    for path in args.inputs:
        replay(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
