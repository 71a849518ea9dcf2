"""CPU time of lowering sampled tuning candidates: what the cost model's features cost.

    python benchmarks/profile_lowering.py [--model encoder] [--batch 64] [--per-task 8]
                                          [--tasks 4] [--seed 0] [--rounds 1] [--profile]
                                          [--dump FILE]

The model (one of tests/relax/frontend/torch_models.py's) is imported with ``from_fx``
at the batch, its tuning tasks extracted as ``tune_relax`` does, and ``--per-task``
candidates of each of the ``--tasks`` heaviest tasks sampled from the default design
space (random decisions, postprocessing applied; seeded, so the same candidates every
run). Each candidate is then lowered as the cost model's features lower it (the
packing of its layout-free inputs split off) and the thread CPU time per lowering is
printed, per task and in all (the least of ``--rounds`` lowerings of each); ``--profile`` adds cProfile's top functions of the
lowering, and ``--dump`` writes every lowered kernel's text (to compare two versions
of the passes: their outputs must match).
"""
import argparse
import cProfile
import hashlib
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rvm.meta_schedule.arg_info import entry_prim_func  # noqa: E402
from rvm.meta_schedule.layout_preproc import measured_module  # noqa: E402
from rvm.meta_schedule.relax_integration import extract_tasks  # noqa: E402
from rvm.meta_schedule.tune_context import TuneContext  # noqa: E402
from rvm.tir.transform.pipeline import lower_module  # noqa: E402


def sampled_candidates(model, batch, tasks, per_task, seed):
    """``[(task name, layout_free, Schedule)]``: ``per_task`` samples of each of the
    ``tasks`` heaviest tasks of the model at the batch."""
    import torch

    from rvm.relax.frontend.torch import from_fx
    from tests.relax.frontend.torch_models import MODELS, seeded

    model_class, shape = MODELS[model]
    mod = from_fx(torch.fx.symbolic_trace(seeded(model_class)), [((batch,) + shape, "float32")])
    extracted = sorted(extract_tasks(mod, "c"), key=lambda t: -t.weight)[:tasks]
    out = []
    for k, task in enumerate(extracted):
        context = TuneContext(task.mod, target="c", rand_state=seed + k,
                              layout_free=task.layout_free)
        strategy = context.search_strategy
        strategy.pre_tuning(per_task, per_task, context.generate_design_space())
        for sch, _ in strategy.sample_new(per_task, set(), per_task * 5):
            out.append((task.task_name, tuple(task.layout_free), sch))
    return out


def lower_candidate(sch, layout_free):
    """The candidate's kernel lowered as the cost model's features lower it."""
    split = measured_module(entry_prim_func(sch.mod), layout_free)[0] if layout_free else None
    return lower_module(sch.mod if split is None else split)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="encoder")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--per-task", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1,
                        help="lower each candidate this many times, keep the least CPU time")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--dump")
    args = parser.parse_args(argv)
    candidates = sampled_candidates(args.model, args.batch, args.tasks, args.per_task,
                                    args.seed)
    profiler = cProfile.Profile() if args.profile else None
    per_task, texts = {}, []
    for name, layout_free, sch in candidates:
        if profiler:
            profiler.enable()
        spent = None
        for _ in range(args.rounds):
            start = time.thread_time()
            lowered = lower_candidate(sch, layout_free)
            took = time.thread_time() - start
            spent = took if spent is None else min(spent, took)
        if profiler:
            profiler.disable()
        per_task.setdefault(name, []).append(spent)
        texts.append(f"# {name}\n{lowered.script()}\n")
    total = sum(sum(v) for v in per_task.values())
    for name, spent in per_task.items():
        print(f"{name:40s} {len(spent):3d} lowerings  {1e3 * sum(spent) / len(spent):7.1f} ms "
              f"CPU each")
    count = sum(len(v) for v in per_task.values())
    digest = hashlib.sha256("".join(texts).encode()).hexdigest()[:16]
    print(f"all: {count} lowerings, {1e3 * total / count:.1f} ms CPU each; "
          f"lowered texts sha256 {digest}")
    if args.dump:
        with open(args.dump, "w") as f:
            f.write("".join(texts))
    if profiler:
        pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "cumulative")).print_stats(40)


if __name__ == "__main__":
    main()
