"""A finalist's figure in a round of the final comparison is the median of its times in
that round, not the fastest: a parallel kernel that is fast only when a second core
happens to be free (one lucky repeat a round) does not displace the default kernel,
while a kernel faster in most repeats of its rounds does."""
from rvm.ir.base import structural_hash
from tests.meta_schedule.test_final_comparison import DEFAULT, UNSCHEDULED, _tune


def _chosen(database, runner):
    (best,) = database.get_top_k(database.workloads[0], 1)
    return runner.order[str(structural_hash(best.as_schedule().mod))]


def _runner(candidate_times):
    from tests.meta_schedule.fakes import TimesRunner

    def secs(n, index, seen):
        if index == DEFAULT:
            return [1e-3] * 5
        if index == UNSCHEDULED:
            return [5e-3] * 5
        return candidate_times(index)

    return TimesRunner(secs)


def test_one_lucky_repeat_a_round_does_not_displace_the_default(tmp_path):
    # every candidate: 0.6 ms in one repeat of every measurement, 2 ms in the others
    runner = _runner(lambda index: [2e-3, 0.6e-3, 2e-3, 2e-3, 2e-3])
    database = _tune(tmp_path, runner)
    assert _chosen(database, runner) == DEFAULT
    default = database.get_top_k(database.workloads[0], 1)[0]
    assert default.final_secs == [1e-3] * 3


def test_a_kernel_faster_in_most_repeats_of_its_rounds_is_chosen(tmp_path):
    # the fourth kernel measured: 0.8 ms but in one slow repeat a round; the others 1.2 ms
    runner = _runner(lambda index: [0.8e-3, 3e-3, 0.8e-3, 0.8e-3, 0.8e-3] if index == 4
                     else [1.2e-3] * 5)
    assert _chosen(_tune(tmp_path, runner), runner) == 4
