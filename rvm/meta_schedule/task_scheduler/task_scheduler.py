"""TaskScheduler: the tuning loop over tasks (TVM's ``ms.task_scheduler``).

``tune(tasks, task_weights, max_trials_global, ...)`` repeatedly picks a
task (``next_task_id``, the subclasses' policy), takes a batch of candidates
from its search strategy, builds them, measures them against the task's
unscheduled kernel, hands the outcomes to the measure callbacks (by default:
recorded in the database, failures with their reason, and taught to the cost
model), and reports progress. It stops when
every task's search is over or ``max_trials_global`` trials are recorded
(records already in the database count: a finished run resumes to nothing).

At the end, each task's ``remeasure_top_k`` best candidates of this run are
measured again, in ``remeasure_rounds`` rounds that take the candidates in
turn, and the times are added to their records. Records are ranked by their
fastest time, so a busy moment of the machine during one measurement neither
hides a good candidate (its later rounds are quiet) nor crowns a bad one
(the candidates it is compared with were measured around the same moments).

With ``allocate_by_share`` (the default), every task first measures its baselines
(its default kernel, the one the build would use untuned, and the unscheduled one),
then the trials left in the global budget are split by each task's share of the
model's time, weight times best latency (``allocation.py``): a kernel the model
spends little time in gets few trials, or none.
"""
from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.builder.builder import BuilderInput
from rvm.meta_schedule.feature_extractor.per_store_feature import count_flops
from rvm.meta_schedule.lowered import lowered_module
from rvm.meta_schedule.runner.runner import RunnerInput, RunnerResult
from rvm.meta_schedule.task_scheduler.allocation import allocate
from rvm.meta_schedule.tune_log import TaskRow
from rvm.tir.transform.pipeline import lower_module


class _TaskState:
    def __init__(self, task_id, context, weight, row):
        self.task_id = task_id
        self.context = context
        self.weight = weight
        self.row = row
        self.reference = None
        self.done = False
        self.history = []  # best latency after each batch
        self.measured_this_run = 0
        self.measured = {}  # candidate hash -> RunnerInput, this run's valid candidates


class TaskScheduler:
    """Base class: subclasses choose the next task in ``next_task_id``.

    ``remeasure_top_k`` candidates per task are measured again at the end, in
    ``remeasure_rounds`` rounds (0: never); ``allocate_by_share``: trials split by each
    task's share of the model's time (module docstring)."""

    def __init__(self, remeasure_top_k=4, remeasure_rounds=2, allocate_by_share=True):
        if int(remeasure_top_k) < 0 or int(remeasure_rounds) < 0:
            raise ValueError(f"remeasure_top_k and remeasure_rounds must be >= 0, got "
                             f"{remeasure_top_k} and {remeasure_rounds}")
        self.tasks = []
        self.remeasure_top_k = int(remeasure_top_k)
        self.remeasure_rounds = int(remeasure_rounds)
        self.allocate_by_share = bool(allocate_by_share)

    def next_task_id(self):
        """The index of the task to tune next (only tasks not done), or -1."""
        raise NotImplementedError

    def _live(self):
        return [k for k, t in enumerate(self.tasks) if not t.done]

    def tune(self, tasks, task_weights, max_trials_global, max_trials_per_task,
             num_trials_per_iter, builder, runner, database, cost_model, log,
             measure_callbacks):
        """Tunes ``tasks`` (TuneContexts); returns the database."""
        self.tasks = []
        self.log = log
        self.database = database
        self.cost_model = cost_model
        for k, (context, weight) in enumerate(zip(tasks, task_weights)):
            flop = count_flops(entry_prim_func(lower_module(context.mod)))
            row = TaskRow(k, context.task_name, flop, weight)
            self.tasks.append(_TaskState(k, context, weight, row))
            log.info(f'Initializing Task #{k}: "{context.task_name}"')
            context.pre_tuning(max_trials_per_task, num_trials_per_iter, database=database,
                               cost_model=cost_model)
            strategy = context.search_strategy
            best = database.get_top_k(strategy.workload, 1) if strategy.workload else []
            row.record(best[0].best_run_sec if best else None, strategy.trials)
        self._build_references(builder)
        log.table([t.row for t in self.tasks])
        spent = sum(t.context.search_strategy.trials for t in self.tasks)
        if self.allocate_by_share and max_trials_global > spent:
            for k in self._live():
                self._tune_batch(k, 0, builder, runner, measure_callbacks)
            self._allocate(max_trials_global, max_trials_per_task)
        while True:
            total = sum(t.context.search_strategy.trials for t in self.tasks)
            left = max_trials_global - total
            if left <= 0 or not self._live():
                break
            k = self.next_task_id()
            if k < 0:
                break
            self.log.info(f'TaskScheduler picks Task #{k}: "{self.tasks[k].context.task_name}"')
            self._tune_batch(k, min(left, num_trials_per_iter), builder, runner,
                             measure_callbacks)
        for task in self.tasks:
            self._remeasure(task, runner, database)
        for task in self.tasks:
            task.row.done = True
            task.context.post_tuning()
        return database

    def _tune_batch(self, k, limit, builder, runner, measure_callbacks):
        """Measures the next batch of task ``k`` (at most ``limit`` candidates besides its
        baselines) and records it."""
        task = self.tasks[k]
        candidates = task.context.search_strategy.generate_measure_candidates(limit=limit)
        if not candidates:
            if limit > 0:
                self._finish(task, "its search space has no new candidates"
                             if task.context.search_strategy.remaining else "")
            return
        built, results = self._measure(task, candidates, builder, runner)
        for callback in measure_callbacks:
            callback.apply(self, k, candidates, built, [r for r, _ in results])
        self._account(task, candidates, results)
        if not task.context.search_strategy.remaining:
            self._finish(task, "")

    def _allocate(self, max_trials_global, max_trials_per_task):
        """Splits the trials left among the live tasks by their share of the model's time
        (weight times best latency so far, the default kernel's at least)."""
        live = self._live()
        if not live:
            return
        strategies = [self.tasks[k].context.search_strategy for k in live]
        left = max_trials_global - sum(t.context.search_strategy.trials for t in self.tasks)
        shares = [None if self.tasks[k].row.best is None else
                  self.tasks[k].weight * self.tasks[k].row.best for k in live]
        caps = [max_trials_per_task - s.trials for s in strategies]
        counts = allocate(shares, caps, left)
        for k, strategy, count in zip(live, strategies, counts):
            strategy.max_trials = strategy.trials + count
            self.log.info(f'Task #{k} "{self.tasks[k].context.task_name}": {count} more '
                          f"trial(s) for its share of the model's time")
            if count == 0:
                self._finish(self.tasks[k], "its share of the model's time gets no trials")

    def _build_references(self, builder):
        """Builds each task's unscheduled kernel, the outputs candidates must reproduce."""
        inputs = [BuilderInput(t.context.mod, t.context.target) for t in self.tasks]
        for task, result in zip(self.tasks, builder.build(inputs)):
            if result.error_msg is not None:
                self.log.warning(f'Task #{task.task_id} "{task.context.task_name}" is not '
                                 f"tuned: its unscheduled kernel does not build: "
                                 f"{result.error_msg}")
                task.done = True
            task.reference = result

    def _measure(self, task, candidates, builder, runner):
        context = task.context
        self.log.info(f"Sending {len(candidates)} sample(s) to builder")
        built = builder.build([BuilderInput(c.sch.mod, context.target,
                                            lowered=lowered_module(c.sch)) for c in candidates])
        ok = [(c, b) for c, b in zip(candidates, built) if b.error_msg is None]
        self.log.info(f"Sending {len(ok)} sample(s) to runner")
        inputs = [RunnerInput.from_builder_result(b, c.args_info, "main", task.reference)
                  for c, b in ok]
        measured = iter(zip((f.result() for f in runner.run(inputs)), inputs))
        results = []
        for b in built:
            if b.error_msg is not None:
                results.append((RunnerResult(error_msg=b.error_msg), None))
            else:
                results.append(next(measured))
        return built, results

    def _account(self, task, candidates, results):
        """Notes the batch: this run's valid candidates, failures, progress."""
        context = task.context
        strategy = context.search_strategy
        for candidate, (result, runner_input) in zip(candidates, results):
            if result.error_msg is None:
                task.measured[candidate.candidate_hash] = runner_input
            else:
                task.row.failures += 1
                self.log.info(f'Task #{task.task_id} "{context.task_name}": candidate failed: '
                              f"{result.error_msg.splitlines()[0][:300]}")
        context.notify_runner_results(candidates, [result for result, _ in results])
        task.measured_this_run += len(candidates)
        best = self.database.get_top_k(strategy.workload, 1)
        task.row.record(best[0].best_run_sec if best else None, strategy.trials)
        task.history.append(task.row.best)
        self.log.info(f'[Updated] Task #{task.task_id}: "{context.task_name}"')
        self.log.table([t.row for t in self.tasks])
        self.log.bar(task.row, strategy.max_trials)

    def _remeasure(self, task, runner, database):
        """Measures the task's best candidates of this run again (see the module docstring)."""
        if self.remeasure_top_k == 0 or len(task.measured) < 2:
            return
        strategy = task.context.search_strategy
        best = database.get_top_k(strategy.workload, 1)
        fingerprint = best[0].fingerprint if best else None
        mine = [(r, task.measured[r.candidate_hash])
                for r in database.records_of(strategy.workload) if r.is_valid
                and r.fingerprint == fingerprint and r.candidate_hash in task.measured]
        top = sorted(mine, key=lambda m: m[0].best_run_sec)[:self.remeasure_top_k]
        if len(top) < 2:
            return
        self.log.info(f'Task #{task.task_id} "{task.context.task_name}": measuring its '
                      f"{len(top)} best candidates again, {self.remeasure_rounds} round(s)")
        times = [[] for _ in top]
        for _ in range(self.remeasure_rounds):
            for k, future in enumerate(runner.run([runner_input for _, runner_input in top])):
                result = future.result()
                # A candidate that fails now (a lost worker) keeps its first measurement.
                if result.error_msg is None and result.fingerprint in (None, fingerprint):
                    times[k].extend(result.run_secs)
        for (record, _), secs in zip(top, times):
            if secs:
                database.commit_remeasurement(record, secs)
        best = database.get_top_k(strategy.workload, 1)
        task.row.record(best[0].best_run_sec if best else None, strategy.trials)

    def _finish(self, task, why):
        task.done = True
        task.row.done = True
        left = len(self._live())
        reason = f" ({why})" if why else ""
        self.log.info(f"Task #{task.task_id} has finished{reason}. Remaining task(s): {left}")
        failures = getattr(task.context.search_strategy, "replay_failures", None)
        for message, count in failures.most_common(3) if failures else ():
            self.log.info(f"Task #{task.task_id}: {count} sampled schedule(s) were invalid: "
                          f"{message}")


class PyTaskScheduler(TaskScheduler):
    """A task scheduler written in Python by subclassing."""
