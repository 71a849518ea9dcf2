"""Fuzzes untrusted executables on both engines, or the script parser, for a fixed budget.

    python fuzz/fuzz_loader.py loader --seconds 600 [--executions N] [--jobs 2] [--seed 0]
    python fuzz/fuzz_loader.py tir --seconds 600 [--asan] [--jobs 2] [--seed 0]
    python fuzz/fuzz_loader.py parser --seconds 600 [--crash-dir fuzz-crashes]

``loader``: mutants of saved executables (one with a kernel library, one calling every C
builtin), half raw byte mutants, half structure-aware (a decoded section edited, the file
re-encoded so checksums hold). ``tir``: executables whose kernel TIR is mutated at the
node level (fuzz/tir_mutate.py: narrowing lets, index arithmetic, dtype aliasing, DAG
sharing, call_packed of every registered global, allocations, loops, swapped buffers),
re-serialized with valid checksums. Both load each mutant with
``Executable.from_bytes`` (kernels regenerated from their TIR) and, when it loads, run it
on the native and the python engine with ``memory_limit``/``step_limit``/``time_limit`` as
for an untrusted model, the kernels compiled under the campaign's compile time limit
(fuzz/child.py). ``--asan`` compiles the kernels under AddressSanitizer at -O1
(fuzz/asan.py). ``python fuzz/tir_profile.py`` times each stage of a TIR mutant.
``parser``: mutants of a script-form program (text edits, and syntax-tree edits that
Python accepts) parsed with ``rvm.script.from_source``.

The summary (JSON on stdout) counts where the inputs stopped (fuzz/stages.py: rejected by
a checksum, by the format, by the bytecode verifier, by the TIR verifier, kernel refused
by the code generator, compile stopped at its time limit, loaded, refused at link, ran,
ran with an error; for the parser Python's syntax check, rvm's parser, parsed), internal
errors (an exception that is not one of rvm's documented errors: the first input of each
kind saved, with its traceback), engine mismatches, crashes, ASan reports and hangs (an
input using over ``--hang-seconds`` of CPU, 10 by default, counting the compilers it
starts, or over ``--hang-wall-seconds`` of wall time, 60 by default, from the first input
on: on a machine shared with other work the wall time of a busy input stretches with the
load, its CPU time does not), and the most CPU and wall time one input took. Children run under
``--memory-mb`` (address space; ASan's RSS limit under --asan) with a fresh kernel cache
per campaign; see fuzz/harness.py. The exit status is 1 when there was a crash, hang,
internal error or harness error.

Test hook: ``RVM_FUZZ_INJECT=KIND@N`` (segv, hang, spin, internal, asan) makes the first child
do that on its input N, so a test can check the harness reports it (fuzz/child.py).
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

def loader_seeds():
    """[(bytes, {function: arguments})] of the seed executables. The second calls the
    environment functions ``ext.sum_f32`` and ``ext.echo``, registered here as a user's
    environment would."""
    import numpy as np
    from rvm import relax
    from rvm.runtime.packed_func import register_func
    from tests.e2e.test_safe_loading import AddOne
    from tests.vm.test_hostile import _program

    def sum_f32(x):
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"ext.sum_f32 expects a tensor, got {type(x).__name__}")
        return float(np.from_dlpack(x).sum())
    register_func("ext.sum_f32", sum_f32, override=True)
    register_func("ext.echo", lambda x: x, override=True)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    return [(relax.build(AddOne, target="c").save_to_bytes(),
             {"main": [np.arange(8, dtype="float32")]}),
            (_program().save_to_bytes(), {"main": [x, 0], "helper": [x]})]


PARSER_SEEDS = ["""from rvm.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add_one(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in T.grid(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor(("n",), "float32"), w: R.Tensor((4, 4), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), "float32"))
            z = R.matmul(w, R.permute_dims(w))
            c = R.add(z, R.const(1.0, "float32"))
            R.output(y, c)
        return (y, c)
"""]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        from fuzz.child import child
        return child(argv[1], int(argv[2]), argv[3], argv[4] if len(argv) > 4 else "")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["loader", "tir", "parser"])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--executions", type=int, help="stop early after this many inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="child processes run at once")
    parser.add_argument("--hang-seconds", type=float, default=10,
                        help="an input using more CPU seconds (its compilers' included) is "
                             "a hang")
    parser.add_argument("--hang-wall-seconds", type=float, default=60,
                        help="an input running longer (asleep, or deadlocked) is a hang")
    parser.add_argument("--memory-mb", type=int, default=4096, help="memory of a child")
    parser.add_argument("--asan", action="store_true",
                        help="compile kernels under AddressSanitizer (loader and tir)")
    parser.add_argument("--crash-dir", default="fuzz-crashes")
    args = parser.parse_args(argv)
    if args.asan and args.kind == "parser":
        parser.error("--asan applies to the loader and tir campaigns")
    from fuzz.harness import run
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
