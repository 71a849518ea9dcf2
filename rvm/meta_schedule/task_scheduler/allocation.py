"""Trials by share of the model's time: how a whole-model budget is split among tasks.

After the first batch of every task has measured its default kernel (see
``search_strategy.py``), a task's share of the model's time is its weight (calls per
model run) times its best measured latency: what the default build spends in it.
``allocate(shares, caps, budget)`` gives each task trials in proportion to its share,
none more than its cap (``max_trials_per_task`` minus what it has measured), and hands
what a capped task cannot use to the others (TVM's task weights, without gradients).
Counts are whole: the remainders go to the largest fractional parts, ties to the
earlier task. A task whose share is below ``min_share`` of the total gets nothing: it
keeps its default kernel, measured with the baselines (tuning a kernel the model spends
1% of its time in cannot gain more than 1%, and its batch costs as much search as any).

>>> allocate([3.0, 1.0, 0.0], [100, 100, 100], 8)
[6, 2, 0]
>>> allocate([3.0, 1.0], [4, 100], 8)
[4, 4]
>>> allocate([97.0, 3.0], [100, 100], 8, min_share=0.05)
[8, 0]
"""


def allocate(shares, caps, budget, min_share=0.0):
    """Whole trial counts per task, in proportion to ``shares`` (non-negative; a task with
    share 0 or None gets nothing unless every share is unknown, then all count alike; one
    below ``min_share`` of their sum gets nothing either), each at most its ``caps``
    entry, summing to at most ``budget``."""
    if len(shares) != len(caps):
        raise ValueError(f"allocate: {len(shares)} shares but {len(caps)} caps")
    known = [s for s in shares if s is not None]
    if any(s < 0 for s in known):
        raise ValueError(f"allocate: shares must be >= 0, got {list(shares)}")
    if not known or not any(known):
        shares = [1.0] * len(shares)
    if not 0 <= float(min_share) < 1:
        raise ValueError(f"allocate: min_share must be in [0, 1), got {min_share}")
    shares = [float(s or 0.0) for s in shares]
    floor = float(min_share) * sum(shares)
    shares = [s if s >= floor else 0.0 for s in shares]
    caps = [max(0, int(c)) for c in caps]
    out = [0] * len(shares)
    left = max(0, int(budget))
    open_ = [k for k in range(len(shares)) if shares[k] > 0 and caps[k] > 0]
    while left > 0 and open_:
        total = sum(shares[k] for k in open_)
        exact = {k: left * shares[k] / total for k in open_}
        capped = [k for k in open_ if out[k] + exact[k] >= caps[k]]
        if capped:  # these take their cap; the rest share what is left
            for k in capped:
                left -= caps[k] - out[k]
                out[k] = caps[k]
            open_ = [k for k in open_ if k not in capped]
            continue
        whole = {k: int(exact[k]) for k in open_}
        for k in open_:
            out[k] += whole[k]
        left -= sum(whole.values())
        by_fraction = sorted(open_, key=lambda k: (-(exact[k] - whole[k]), k))
        for k in by_fraction[:left]:
            out[k] += 1
        left = 0
    return out
