"""LocalRunner: candidates measured one at a time in a worker process on this machine.

Each candidate runs in a worker of a WorkerPool with a time limit
(``timeout_sec``): a candidate that crashes its worker (a segfault), runs
past the limit, or gives results other than the unscheduled kernel's is a
RunnerResult with ``error_msg``, and the next candidate gets a fresh worker.
One worker at a time by default, so measurements do not disturb each other.
"""
import concurrent.futures

from rvm.meta_schedule.runner.evaluate import evaluate
from rvm.meta_schedule.runner.runner import EvaluatorConfig, Runner, RunnerFuture, RunnerResult
from rvm.support.worker_pool import WorkerPool


def runner_spec(runner_input, config, seed):
    """The worker job's description of ``runner_input``: plain data, and the ``Preproc``
    of each packed input (``preprocs``: TIR index expressions, which pickle)."""
    ref = runner_input.reference
    return {
        "artifact_path": runner_input.artifact_path,
        "functions": runner_input.functions,
        "func_name": runner_input.func_name,
        "args_info": [a.as_json() for a in runner_input.args_info],
        "reference": None if ref is None else {"artifact_path": ref.artifact_path,
                                               "functions": ref.functions},
        "seed": seed,
        "preprocs": list(getattr(runner_input, "preprocs", ())),
        "config": config.as_dict(),
    }


def result_of(outcome):
    """The RunnerResult of a worker JobResult."""
    if outcome.ok:
        return RunnerResult(outcome.value["run_secs"], fingerprint=outcome.value["fingerprint"])
    return RunnerResult(error_msg=outcome.error)


class LocalRunner(Runner):
    """Measures candidates on this machine.

    ``timeout_sec`` bounds one candidate (check and timing together);
    ``evaluator_config`` says how it is timed; ``max_workers`` candidates are
    measured at once (1: measurements never overlap); ``seed`` fixes the
    random arguments.
    """

    def __init__(self, timeout_sec=30.0, evaluator_config=None, max_workers=1, seed=0):
        self.timeout_sec = float(timeout_sec)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.max_workers = int(max_workers)
        self.seed = seed
        self._pool = None
        self._executor = concurrent.futures.ThreadPoolExecutor(1)

    def run(self, runner_inputs):
        if self._pool is None:
            self._pool = WorkerPool(self.max_workers)
        specs = [(runner_spec(r, self.evaluator_config, self.seed),) for r in runner_inputs]
        batch = self._executor.submit(self._pool.map, evaluate, specs, self.timeout_sec)
        return [RunnerFuture(batch.done, lambda i=i: result_of(batch.result()[i]))
                for i in range(len(specs))]

    def close(self):
        if self._pool is not None:
            self._pool.close()
            self._pool = None
