"""The ``rvm`` command line: build, run, inspect, verify, profile and benchmark executables.

    rvm build model.py -o model.rvm        # a Python file defining an IRModule
    rvm run model.rvm --input x.npy [--output y.npy] [--repeat N]
    rvm inspect model.rvm [--disasm]
    rvm verify model.rvm
    rvm profile model.rvm --input x.npy [--trace out.json]
    rvm debug model.rvm --input x.npy [--break BINDING]   # commands on stdin: h for help
    rvm bench model.rvm --input x.npy [--repeat N] [--reference ref.py]
    rvm tune model.py --work-dir tune_tmp --trials 64 [-o model.rvm]

Every command takes ``--help``. Errors are one line on stderr (``rvm: error:
...``) with exit code 1; usage errors exit with 2, as argparse does.
Executables are untrusted files: their kernels are regenerated from their
TensorIR; ``--trust-native`` also loads hand-written native code.
"""
import argparse
import pathlib
import runpy
import statistics
import sys
import time

import numpy as np


class CLIError(Exception):
    """A failure the command line reports as one line and exit code 1."""


# ---- helpers --------------------------------------------------------------------------

def _load(path, trust_native=False, allow=None):
    from rvm.bytecode.executable import Executable  # the executable side only
    if not pathlib.Path(path).is_file():
        raise CLIError(f"no such file: {path}")
    try:
        return Executable.load(path, trust_native=trust_native, allow=allow or None)
    except (ValueError, OSError) as err:
        raise CLIError(f"cannot load {path}: {err}") from None


def _inputs(paths):
    arrays = []
    for path in paths:
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as err:
            raise CLIError(f"cannot read input {path}: {err} (expected a .npy file)") from None
    return arrays


def _vm(ex, engine, env_files=(), limits=None):
    from rvm.runtime.device import cpu
    from rvm.vm.machine import VirtualMachine
    for path in env_files:  # registers the environment functions the executable calls
        try:
            runpy.run_path(path, run_name="rvm_env")
        except Exception as err:  # the user's file failed
            raise CLIError(f"--env {path} failed: {type(err).__name__}: {err}") from None
    try:
        return VirtualMachine(ex, cpu(), engine=engine, **(limits or {}))
    except (ValueError, TypeError) as err:
        hint = (" (register them: --env FILE.py runs a file that registers them)"
                if "could not be resolved" in str(err) else "")
        raise CLIError(" ".join(str(err).split()) + hint) from None


def _limits(args):
    return {"memory_limit": args.memory_limit, "step_limit": args.step_limit,
            "time_limit": args.time_limit}


def _signature(ex, name):
    info = ex.function_info(name)
    params = ", ".join(info.param_names) if info.param_names else f"{info.num_args} arguments"
    return f"{name}({params})"


def _check_arity(ex, name, args):
    names = ex.vm_function_names()
    if name not in names:
        raise CLIError(f"the executable has no function '{name}'; it has: {', '.join(names)}")
    info = ex.function_info(name)
    if len(args) != info.num_args:
        raise CLIError(f"{_signature(ex, name)} takes {info.num_args} inputs, "
                       f"{len(args)} given (--input FILE.npy for each)")


def _call(vm, name, args):
    try:
        return vm[name](*args)
    except Exception as err:  # a bad input: the VM's message names the parameter
        raise CLIError(f"{type(err).__name__}: {err}") from None


def _outputs(value):
    """The arrays of a returned value (a tensor or nested tuples of them)."""
    from rvm.runtime.container import Array
    from rvm.runtime.ndarray import NDArray
    if isinstance(value, NDArray):
        return [value.numpy()]
    if isinstance(value, (Array, tuple, list)):
        return [a for item in value for a in _outputs(item)]
    return [np.asarray(value)]


def _times(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    return times


# ---- commands -------------------------------------------------------------------------

def _source_module(args):
    """The IRModule (and ``params``, with --params) a Python file defines."""
    from rvm.ir.module import IRModule
    source = pathlib.Path(args.model)
    if source.suffix != ".py":
        raise CLIError(f"cannot build {source}: expected a Python file defining an IRModule "
                       "(ONNX and torch files are not importable from the command line yet)")
    if not source.is_file():
        raise CLIError(f"no such file: {source}")
    try:
        namespace = runpy.run_path(str(source), run_name="rvm_build")
    except Exception as err:  # the user's file failed
        raise CLIError(f"{source} failed: {type(err).__name__}: {err}") from None
    if args.module:
        mod = namespace.get(args.module)
        if not isinstance(mod, IRModule):
            raise CLIError(f"{source} defines no IRModule named '{args.module}'")
    else:
        found = {k: v for k, v in namespace.items() if isinstance(v, IRModule)}
        if len(found) != 1:
            raise CLIError(f"{source} defines {len(found)} IRModules "
                           f"({', '.join(found) or 'none'}); name one with --module")
        mod = next(iter(found.values()))
    params = namespace.get("params") if args.params else None
    if args.params and not isinstance(params, dict):
        raise CLIError(f"{source} defines no `params` dict (--params binds it to main)")
    return mod, params


def _write(ex, out):
    out = pathlib.Path(out)
    ex.export_library(str(out))
    print(f"wrote {out} ({out.stat().st_size} bytes): {', '.join(ex.vm_function_names())}")


def cmd_build(args):
    from rvm.driver.relax_build import build
    mod, params = _source_module(args)
    try:
        ex = build(mod, target=args.target, params=params)
    except Exception as err:
        raise CLIError(f"build failed: {type(err).__name__}: {err}") from None
    _write(ex, args.output or pathlib.Path(args.model).with_suffix(".rvm").name)


def cmd_tune(args):
    # (the one command above the driver layer: tests/test_layering.py, APPLICATIONS)
    from rvm.meta_schedule import relax_integration
    from rvm.meta_schedule.runner.local_runner import LocalRunner
    from rvm.meta_schedule.runner.runner import EvaluatorConfig
    mod, params = _source_module(args)
    tasks = relax_integration.extract_tasks(mod, args.target, params)
    for name, why in tasks.skipped:
        print(f"skipped {name}: {why}", file=sys.stderr)
    if not list(tasks):
        raise CLIError(f"{args.model} has no kernel to tune (static shapes are needed)")
    print(f"tuning {len(list(tasks))} kernel(s) of {args.model} for {args.trials} trials into "
          f"{args.work_dir}: {', '.join(t.task_name for t in tasks)}", file=sys.stderr)
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=args.number, repeat=1,
                                                          min_repeat_ms=args.min_repeat_ms))
    try:
        database = relax_integration.tune_relax(
            mod, params or {}, args.target, args.work_dir, args.trials,
            num_trials_per_iter=args.trials_per_iter, runner=runner, strategy=args.strategy,
            cost_model="gbt" if args.strategy == "evolutionary" else None,
            seed=args.seed, progress=not args.quiet)
    except (ValueError, TypeError, RuntimeError) as err:
        raise CLIError(f"tuning failed: {type(err).__name__}: {err}") from None
    print(f"tuning records: {args.work_dir} (apply them with "
          f"relax.transform.MetaScheduleApplyDatabase(\"{args.work_dir}\"))")
    if args.output:
        try:
            ex = relax_integration.compile_relax(database, mod, args.target, params)
        except Exception as err:
            raise CLIError(f"build failed: {type(err).__name__}: {err}") from None
        _write(ex, args.output)


def cmd_run(args):
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    inputs = _inputs(args.input)
    _check_arity(ex, args.function, inputs)
    vm = _vm(ex, args.engine, args.env, _limits(args))
    result = _call(vm, args.function, inputs)
    times = _times(lambda: vm[args.function](*inputs), args.repeat - 1) if args.repeat > 1 else []
    arrays = _outputs(result)
    if args.output:
        if len(arrays) != 1:
            raise CLIError(f"{args.function} returned {len(arrays)} tensors; --output saves one")
        np.save(args.output, arrays[0])
        print(f"wrote {args.output}: {arrays[0].dtype}{list(arrays[0].shape)}")
    else:
        with np.printoptions(threshold=64, edgeitems=4):
            for i, a in enumerate(arrays):
                print(f"output {i}: {a.dtype}{list(a.shape)}\n{a}")
    if times:
        print(f"{len(times)} more runs: median {statistics.median(times):.1f} us")


def cmd_inspect(args):
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    print(ex.stats())
    print("functions:")
    for name in ex.vm_function_names():
        print(f"  {_signature(ex, name)}")
    print("embedded modules:")
    for mod in list(ex.kernel_libs) + list(ex.imported_modules):
        names = ", ".join(mod.function_names())
        tir = " (regenerated from TensorIR)" if getattr(mod, "tir", None) else ""
        print(f"  {mod.type_key}{tir}: {names}")
    if args.disasm:
        print(ex.as_text())


def cmd_verify(args):
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    print(f"{args.model}: OK ({len(ex.func_table)} functions, {len(ex.instructions)} "
          f"instructions, {len(ex.kernel_libs)} kernel libraries, kernels regenerated)")


def cmd_profile(args):
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    inputs = _inputs(args.input)
    _check_arity(ex, args.function, inputs)
    vm = _vm(ex, args.engine, args.env, _limits(args))
    _call(vm, args.function, inputs)  # warm up (and report bad inputs cleanly)
    print(vm.profile(args.function, *inputs, trace=args.trace))
    if args.trace:
        print(f"wrote {args.trace} (Chrome trace-event JSON: open it in ui.perfetto.dev or "
              f"chrome://tracing)")


def cmd_debug(args):
    from rvm.driver.cli_debug import debug_session
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    inputs = _inputs(args.input)
    _check_arity(ex, args.function, inputs)
    vm = _vm(ex, args.engine, args.env, _limits(args))
    try:
        debug_session(vm, args.function, inputs, sys.stdin, args.breaks, args.watch_nonfinite)
    except (ValueError, TypeError, RuntimeError) as err:  # bad inputs or breakpoints
        raise CLIError(" ".join(str(err).split())) from None


def cmd_bench(args):
    ex = _load(args.model, args.trust_native, getattr(args, "allow", None))
    inputs = _inputs(args.input)
    _check_arity(ex, args.function, inputs)
    rows = []
    rows_engines = ("native", "python") if args.engine == "both" else (args.engine,)
    for engine in rows_engines:
        vm = _vm(ex, engine, args.env if engine == rows_engines[0] else (), _limits(args))
        _call(vm, args.function, inputs)
        rows.append((f"rvm ({engine})", _times(lambda: vm[args.function](*inputs),
                                                 args.repeat)))
    if args.reference:
        fn = runpy.run_path(args.reference, run_name="rvm_bench").get("reference")
        if not callable(fn):
            raise CLIError(f"{args.reference} defines no function 'reference(*inputs)'")
        fn(*inputs)
        rows.append(("reference", _times(lambda: fn(*inputs), args.repeat)))
    base = statistics.median(rows[-1][1]) if args.reference else None
    print(f"{'':16s} {'median us':>10s} {'min us':>10s} {'mean us':>10s}"
          + (f" {'x reference':>12s}" if base else ""))
    for label, times in rows:
        med = statistics.median(times)
        line = f"{label:16s} {med:10.1f} {min(times):10.1f} {statistics.mean(times):10.1f}"
        print(line + (f" {med / base:12.2f}" if base else ""))


# ---- parser ---------------------------------------------------------------------------

def _parser():
    parser = argparse.ArgumentParser(prog="rvm", description="Build, run and inspect rvm "
                                     "executables (.rvm files).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, fn, help_text, model_help="an executable (.rvm)"):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("model", help=model_help)
        p.set_defaults(fn=fn)
        if name not in ("build", "tune"):
            p.add_argument("--trust-native", action="store_true",
                           help="also load hand-written native code in the file (runs it "
                                "unchecked: only for files you trust)")
        return p

    p = command("build", cmd_build, "build an executable from a Python file defining an "
                "IRModule", "a .py file defining one IRModule (and optionally `params`)")
    p.add_argument("-o", "--output", help="the executable to write (default: MODEL.rvm)")
    p.add_argument("--module", help="the IRModule's variable name, if the file has several")
    p.add_argument("--target", default="c", choices=["c", "llvm"], help="kernel target")
    p.add_argument("--params", action="store_true",
                   help="bind the file's `params` dict to main's parameters")
    for name, fn, text in (("run", cmd_run, "run a function of an executable on .npy inputs"),
                           ("profile", cmd_profile, "time every kernel and builtin call of "
                                                    "one run"),
                           ("bench", cmd_bench, "a latency table of a function"),
                           ("debug", cmd_debug, "step through a run: breakpoints, registers, "
                                                "a NaN watch (commands on stdin, h for help)")):
        p = command(name, fn, text)
        p.add_argument("--input", "-i", action="append", default=[], metavar="FILE.npy",
                       help="an argument, in order (repeat for each)")
        p.add_argument("--function", "-f", default="main", help="the function (default main)")
        p.add_argument("--env", action="append", default=[], metavar="FILE.py",
                       help="run this Python file first (it registers the environment "
                            "functions the executable calls, e.g. with rvm.register_func)")
        p.add_argument("--allow", action="append", default=[], metavar="NAME",
                       help="a registered function the executable may call (repeat for "
                            "each); when given, the executable may call the VM builtins "
                            "and exactly these, not every function --env registered")
        engines = ["native", "python"] + (["both"] if name == "bench" else [])
        p.add_argument("--engine", default="native", choices=engines, help="the VM engine")
        p.add_argument("--memory-limit", type=int, metavar="BYTES",
                       help="the most bytes the VM may hold allocated at once")
        p.add_argument("--step-limit", type=int, metavar="N",
                       help="the most steps (VM calls, backward jumps) of one run: stops an "
                            "endless loop")
        p.add_argument("--time-limit", type=float, metavar="SECONDS",
                       help="the most seconds one run may take, kernels included")
        if name == "run":
            p.add_argument("--output", "-o", help="save the result to this .npy file")
            p.add_argument("--repeat", type=int, default=1, help="run N times, report time")
        if name == "profile":
            p.add_argument("--trace", metavar="OUT.json",
                           help="also write the run's timeline (Chrome trace-event JSON)")
        if name == "debug":
            p.add_argument("--break", "-b", dest="breaks", action="append", default=[],
                           metavar="BINDING", help="stop at this Relax binding (or kernel, "
                           "or FUNC@N instruction); repeat for each")
            p.add_argument("--watch-nonfinite", action="store_true",
                           help="stop at the first call whose output holds a NaN or Inf")
        if name == "bench":
            p.add_argument("--repeat", type=int, default=100, help="timed runs (default 100)")
            p.add_argument("--reference", metavar="FILE.py",
                           help="a file defining reference(*inputs) (numpy, onnxruntime...) "
                                "to time in the same run")
    p = command("tune", cmd_tune, "tune the kernels of a Python file's IRModule with "
                "meta_schedule (progress on stderr); optionally build with the best ones",
                "a .py file defining one IRModule (and optionally `params`)")
    p.add_argument("--work-dir", "-w", required=True,
                   help="where the tuning records and logs go (reused: records accumulate)")
    p.add_argument("--trials", type=int, default=64, help="trials in all (default 64)")
    p.add_argument("--trials-per-iter", type=int, default=16,
                   help="candidates measured per round (default 16)")
    p.add_argument("--strategy", default="evolutionary", choices=["evolutionary",
                                                                  "replay-trace"],
                   help="the search strategy (default evolutionary, with a cost model)")
    p.add_argument("--number", type=int, default=3, help="calls per measurement (default 3)")
    p.add_argument("--min-repeat-ms", type=float, default=40,
                   help="a measurement lasts at least this long (default 40)")
    p.add_argument("--seed", type=int, help="random seed, for a reproducible search")
    p.add_argument("--module", help="the IRModule's variable name, if the file has several")
    p.add_argument("--target", default="c", choices=["c", "llvm"], help="kernel target")
    p.add_argument("--params", action="store_true",
                   help="bind the file's `params` dict to main's parameters")
    p.add_argument("-o", "--output", help="also build the executable with the tuned kernels")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p = command("inspect", cmd_inspect, "statistics, function signatures, embedded modules")
    p.add_argument("--disasm", action="store_true", help="also print the bytecode")
    command("verify", cmd_verify, "load and verify an executable (bytecode and kernels)")
    return parser


def main(argv=None):
    """The ``rvm`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    for option in ("repeat", "trials", "trials_per_iter", "number"):
        if getattr(args, option, 1) < 1:
            print(f"rvm: error: --{option.replace('_', '-')} must be at least 1",
                  file=sys.stderr)
            return 2
    try:
        args.fn(args)
    except CLIError as err:
        print(f"rvm: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rvm: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
