"""RayRunner: candidates compiled and timed on the workers of a Ray cluster.

What travels to a worker is plain data: the candidate's C source, the C
source of the unscheduled reference kernel, the arguments' shapes and the
evaluator config, and the ``Preproc`` of each input the candidate takes packed
(index expressions, which pickle: the worker packs its random inputs with it). The trace stays with the tuner, which records it. Each
worker is a Ray actor holding a WorkerPool of one process, so on its node a
candidate is compiled (through that node's kernel cache) and checked and
timed exactly as ``LocalRunner`` does it: with a time limit, a crash or a
wrong result coming back as a failed measurement. Every measurement carries
the fingerprint of the hardware that took it, and the database compares
times of one fingerprint only.

A worker measures one candidate at a time. A worker that is lost (its node
fails, its actor is killed) loses no candidate: the candidate goes once more
to another worker (a replacement is started), and a candidate whose second
worker is lost too is recorded as failed with the reason.

>>> # runner = RayRunner(address="auto", num_workers=4)   # a running cluster
>>> # ms.tune_tir(mod, "llvm --num-cores=1", work_dir, 64, runner=runner)
"""
import concurrent.futures
import logging
import threading

from rvm.meta_schedule.builder.local_builder import compile_source
from rvm.meta_schedule.runner.evaluate import evaluate
from rvm.meta_schedule.runner.local_runner import runner_spec
from rvm.meta_schedule.runner.runner import EvaluatorConfig, Runner, RunnerFuture, RunnerResult
from rvm.meta_schedule.tune_log import LOGGER_NAME
from rvm.support.optional import import_optional
from rvm.support.worker_pool import WorkerPool

_LOG = logging.getLogger(LOGGER_NAME)
_WHAT = "RayRunner"


def _ray():
    return import_optional("ray", "distributed", _WHAT)


class MeasureWorker:
    """The body of one measuring actor: a worker process that compiles and times candidates.

    ``measure(job, timeout_sec, build_timeout_sec)`` returns
    ``{"run_secs": [...], "fingerprint": ...}`` or ``{"error": reason}``.
    """

    def __init__(self):
        self.pool = WorkerPool(1)

    def _compile(self, source, use_openmp, build_timeout_sec, what):
        outcome = self.pool.run(compile_source, (source, use_openmp, None), build_timeout_sec)
        if not outcome.ok:
            raise RuntimeError(f"build of the {what} on the worker failed: {outcome.error}")
        return outcome.value

    def measure(self, job, timeout_sec, build_timeout_sec):
        spec = dict(job["spec"])
        try:
            spec["artifact_path"] = self._compile(job["source"], job["use_openmp"],
                                                  build_timeout_sec, "candidate")
            reference = job["reference"]
            if reference is not None:
                spec["reference"] = dict(spec["reference"], artifact_path=self._compile(
                    reference["source"], reference["use_openmp"], build_timeout_sec,
                    "unscheduled kernel"))
        except RuntimeError as err:
            return {"error": str(err)}
        outcome = self.pool.run(evaluate, (spec,), timeout_sec)
        if not outcome.ok:
            return {"error": outcome.error}
        return outcome.value


def measure_job(runner_input, config, seed):
    """The plain data sent to a worker for ``runner_input`` (sources instead of paths)."""
    if runner_input.source is None:
        raise ValueError(f"RayRunner needs the candidate's C source to compile it on a worker; "
                         f"{runner_input!r} has none")
    ref = runner_input.reference
    if ref is not None and ref.source is None:
        raise ValueError("RayRunner needs the unscheduled kernel's C source; the reference "
                         "BuilderResult has none")
    return {
        "spec": runner_spec(runner_input, config, seed),
        "source": runner_input.source,
        "use_openmp": runner_input.use_openmp,
        "reference": None if ref is None else {"source": ref.source,
                                               "use_openmp": ref.use_openmp},
    }


def _kill(ray, worker):
    try:
        ray.kill(worker)
    except Exception:  # already gone
        pass


def _actor_options(resources):
    """Ray actor options from ``resources`` ({"CPU": 1, "GPU": 0, "memory": ..., custom...})."""
    resources = dict(resources or {"CPU": 1})
    options = {"num_cpus": float(resources.pop("CPU", 1))}
    if "GPU" in resources:
        options["num_gpus"] = float(resources.pop("GPU"))
    if "memory" in resources:
        options["memory"] = int(resources.pop("memory"))
    if resources:
        options["resources"] = {str(k): float(v) for k, v in resources.items()}
    return options


class RayRunner(Runner):
    """Measures candidates on Ray workers (TVM's RPC runner, on Ray instead of a tracker).

    ``address`` is given to ``ray.init`` when Ray is not initialized yet
    ("auto": the cluster this machine joined with ``ray start``; None: a
    local one). ``num_workers`` measuring actors run at once (default: one
    per alive node), each holding ``resources`` (default ``{"CPU": 1}``).
    ``timeout_sec`` bounds one candidate's check and timing,
    ``build_timeout_sec`` its compile on the worker. Candidates whose worker
    is lost are retried once on another worker (``retried`` counts them).
    """

    def __init__(self, address=None, num_workers=None, resources=None, timeout_sec=30.0,
                 evaluator_config=None, build_timeout_sec=60.0, seed=0):
        if num_workers is not None and int(num_workers) < 1:
            raise ValueError(f"RayRunner needs num_workers >= 1, got {num_workers}")
        if resources is not None and not isinstance(resources, dict):
            raise TypeError(f"RayRunner: resources must be a dict like {{'CPU': 1}}, got "
                            f"{type(resources).__name__}")
        self.address = address
        self.num_workers = None if num_workers is None else int(num_workers)
        self.resources = dict(resources) if resources is not None else None
        self.timeout_sec = float(timeout_sec)
        self.build_timeout_sec = float(build_timeout_sec)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.seed = seed
        self.retried = 0  # candidates sent to a second worker after losing their first
        self.lost = []  # the reasons workers were lost
        self._actor_options = _actor_options(resources)
        self._workers = []
        self._in_flight = 0
        self._lock = threading.Lock()
        self._executor = concurrent.futures.ThreadPoolExecutor(1)

    @property
    def max_workers(self):
        return self.num_workers or len(self._workers) or 1

    @property
    def workers(self):
        """The measuring actors alive now (a lost one is replaced on the next dispatch)."""
        with self._lock:
            return list(self._workers)

    @property
    def in_flight(self):
        """How many candidates are on workers now."""
        return self._in_flight

    def _connect(self):
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address)
        return ray

    def _start_worker(self, ray):
        actor_class = ray.remote(max_restarts=0, max_task_retries=0)(MeasureWorker)
        worker = actor_class.options(scheduling_strategy="SPREAD",
                                     **self._actor_options).remote()
        with self._lock:
            self._workers.append(worker)
        return worker

    def _ensure_workers(self, ray):
        wanted = self.num_workers or max(1, sum(1 for n in ray.nodes() if n.get("Alive")))
        while len(self._workers) < wanted:
            self._start_worker(ray)

    def run(self, runner_inputs):
        jobs = []
        for runner_input in runner_inputs:
            try:
                jobs.append(measure_job(runner_input, self.evaluator_config, self.seed))
            except ValueError as err:
                jobs.append(RunnerResult(error_msg=str(err)))
        ray = self._connect()
        self._ensure_workers(ray)
        batch = self._executor.submit(self._measure_all, ray, jobs)
        return [RunnerFuture(batch.done, lambda i=i: batch.result()[i])
                for i in range(len(jobs))]

    def _lose(self, ray, worker, err):
        reason = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
            self.lost.append(reason)
        _kill(ray, worker)
        _LOG.warning("RayRunner: lost a worker (%s)", reason)
        return reason

    def _measure_all(self, ray, jobs):
        """Sends every job to a free worker, one per worker at a time; results in order."""
        results = [job if isinstance(job, RunnerResult) else None for job in jobs]
        queue = [(index, 0) for index, job in enumerate(jobs) if results[index] is None]
        pending = {}  # ObjectRef -> (index, attempt, worker)
        while queue or pending:
            busy = {w for _, _, w in pending.values()}
            self._ensure_workers(ray)
            for worker in [w for w in self.workers if w not in busy]:
                if not queue:
                    break
                index, attempt = queue.pop(0)
                ref = worker.measure.remote(jobs[index], self.timeout_sec,
                                            self.build_timeout_sec)
                pending[ref] = (index, attempt, worker)
            self._in_flight = len(pending)
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index, attempt, worker = pending.pop(ref)
                try:
                    value = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                        ray.exceptions.ActorUnavailableError) as err:
                    reason = self._lose(ray, worker, err)
                    if attempt == 0:
                        self.retried += 1
                        queue.insert(0, (index, 1))
                    else:
                        results[index] = RunnerResult(
                            error_msg=f"lost its worker twice; last: {reason}")
                    continue
                except ray.exceptions.RayTaskError as err:  # the actor's method raised
                    results[index] = RunnerResult(error_msg=f"measuring on the worker failed: "
                                                            f"{err.cause!r}")
                    continue
                if "error" in value:
                    results[index] = RunnerResult(error_msg=value["error"])
                else:
                    results[index] = RunnerResult(value["run_secs"],
                                                  fingerprint=value["fingerprint"])
            self._in_flight = len(pending)
        return results

    def close(self):
        with self._lock:
            workers, self._workers = self._workers, []
        if not workers:
            return
        ray = _ray()
        if ray.is_initialized():
            for worker in workers:
                _kill(ray, worker)
