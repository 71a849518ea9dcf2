"""Where the time of a TIR fuzz campaign goes: mutants/minute per stage.

    python fuzz/tir_profile.py --inputs 40 [--asan] [--seed 1]

Makes ``--inputs`` TIR mutants (the campaign's generator, fuzz/child.py) in one process
and times each stage of each mutant: making it (mutate and re-serialize), decoding the
file and its TIR, the TIR verifier, the C code generator, the compiler, loading the
compiled library, then per engine linking and running with the campaign's VM limits.
Prints JSON: per stage the inputs that reached it, the seconds spent, and the rate
(inputs per minute of that stage alone); ``total`` is the whole loop's rate. With
``--asan`` the script re-runs itself in the environment of an ASan child (fuzz/asan.py),
with a fresh kernel cache either way.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

STAGES = ("mutate", "decode", "verify_tir", "codegen", "compile", "load_library",
          "native", "python")


class _Clock:
    """Seconds and counts per stage; ``wrap`` times a function under a stage."""

    def __init__(self):
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.count = dict.fromkeys(STAGES, 0)
        self.own = []  # nested timings to subtract from the enclosing stage

    @staticmethod
    def reset(clock):
        """``clock`` with its counts zeroed (its wrappers stay installed)."""
        clock.seconds = dict.fromkeys(STAGES, 0.0)
        clock.count = dict.fromkeys(STAGES, 0)
        clock.own = []
        return clock

    def add(self, stage, seconds):
        self.seconds[stage] += seconds
        self.count[stage] += 1

    def wrap(self, owner, name, stage):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t
                self.add(stage, spent)
                self.own.append(spent)
        setattr(owner, name, timed)


def profile(inputs, seed):
    """{stage: {inputs, seconds, per_minute}} over ``inputs`` mutants from ``seed``."""
    import rvm.codegen.c.target as target
    from fuzz.child import ENGINES, VM_LIMITS, _tir_inputs, campaign_limits
    from rvm.bytecode.executable import Executable
    from rvm.runtime import compiler, kernel_library
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine

    campaign_limits()
    clock = _Clock()
    clock.wrap(target, "verify_untrusted", "verify_tir")
    clock.wrap(target, "render_c_source", "codegen")
    clock.wrap(compiler.Compiler, "_compile_in", "compile")
    clock.wrap(kernel_library.KernelLibrary, "__init__", "load_library")
    generator = _tir_inputs(random.Random(seed))
    next(generator)  # the seeds are built before the first mutant: not a mutant's cost
    clock = _Clock.reset(clock)
    start = time.perf_counter()
    for _ in range(inputs):
        t = time.perf_counter()
        data, calls = next(generator)
        clock.add("mutate", time.perf_counter() - t)
        clock.own.clear()
        t = time.perf_counter()
        try:
            ex = Executable.from_bytes(data, "fuzz")
        except Exception:
            ex = None
        clock.add("decode", time.perf_counter() - t - sum(clock.own))
        if ex is None:
            continue
        for engine in ENGINES:
            t = time.perf_counter()
            try:
                vm = VirtualMachine(ex, cpu(), engine=engine, **VM_LIMITS)
                for name, args in calls(ex):
                    vm[name](*args)
            except Exception:
                pass
            clock.add(engine, time.perf_counter() - t)
    total = time.perf_counter() - start
    report = {stage: {"inputs": clock.count[stage], "seconds": round(clock.seconds[stage], 2),
                      "per_minute": round(60 * clock.count[stage] / clock.seconds[stage], 1)
                      if clock.seconds[stage] else None} for stage in STAGES}
    report["total"] = {"inputs": inputs, "seconds": round(total, 2),
                       "per_minute": round(60 * inputs / total, 1)}
    return report


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--asan", action="store_true")
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)
    if args.asan and "RVM_FUZZ_PROFILE_CHILD" not in os.environ:
        from fuzz.asan import asan_env
        with tempfile.TemporaryDirectory(prefix="rvm-fuzz-profile-") as scratch:
            env = dict(os.environ, PYTHONPATH=ROOT, RVM_CACHE_DIR=scratch,
                       RVM_FUZZ_PROFILE_CHILD="1", **asan_env(scratch, args.memory_mb))
            return subprocess.run([sys.executable, os.path.abspath(__file__),
                                   *(argv if argv is not None else sys.argv[1:])],
                                  env=env).returncode
    if "RVM_FUZZ_PROFILE_CHILD" not in os.environ:
        with tempfile.TemporaryDirectory(prefix="rvm-fuzz-profile-") as scratch:
            os.environ["RVM_CACHE_DIR"] = scratch
            print(json.dumps(profile(args.inputs, args.seed), indent=1))
        return 0
    from fuzz.asan import started_under_asan
    started_under_asan()
    print(json.dumps(profile(args.inputs, args.seed), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
