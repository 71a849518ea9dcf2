"""TaskScheduler: the tuning loop over tasks (TVM's ``ms.task_scheduler``).

``tune(tasks, task_weights, max_trials_global, ...)`` repeatedly picks a
task (``next_task_id``, the subclasses' policy), takes a batch of candidates
from its search strategy, builds them, measures them against the task's
unscheduled kernel, hands the outcomes to the measure callbacks (by default:
recorded in the database, failures with their reason, and taught to the cost
model), and reports progress. It stops when
every task's search is over or ``max_trials_global`` trials are recorded
(records already in the database count: a finished run resumes to nothing).

The loop is a pipeline two batches deep: once a batch is handed to the builder
(``Builder.submit``: its C compiles in worker processes), the next batch is searched
in this process while it compiles, so the search (one core: trace replay, lowering,
the cost model) and the C compiler fill both cores of a small machine instead of
taking turns. Measuring stays alone: a batch is measured only once its build has
finished and the next search has returned, so no compile and no search runs beside a
timing (a kernel timed beside them would lose its second core and its caches, not by
the same amount for every schedule, and the search would rank by that noise). The
batch searched while another compiles is never of the compiling batch's task: a task's
next batch is searched knowing its previous batch's measurements, as without the
pipeline; what the search of another task does not see yet is the compiling batch's
lesson to the shared cost model. The order of every search and every update is fixed,
so a run's choices depend on the measurements alone, never on how long a compile took.
When only the compiling batch's task is left, the next batch waits for it.

At the end comes each task's final comparison: its ``remeasure_top_k`` fastest
records, the best the database ranks and the default kernel's record (the kernel
the build uses untuned) are measured again in ``remeasure_rounds`` rounds that
take them in turn, each round in a rotated order; each finalist's figure per round
is the median of its times in that round, and the database then ranks the finalists
first, by their median round. The search ranks candidates by their fastest time, which
a kernel that is fast only now and then (an OpenMP kernel waiting on a busy core)
can win by luck; the comparison of alternating rounds is what decides, so a tuned
kernel is kept only when it beats the default in the typical round, and a busy
moment of the machine neither hides a good candidate nor crowns a bad one. (The fastest
time of a round would crown such a kernel again: on a loaded machine, a 784-128 layer
at batch 64 that takes 175 us of CPU on one thread, against 116 for the default,
took 88 us when a second core happened to be free in two of three rounds, and its
median in those rounds was 1.2-1.3 ms against the default's 0.64-0.82.)

With ``allocate_by_share`` (the default), every task first measures its baselines
(its default kernel, the one the build would use untuned, and the unscheduled one;
every task's built in one go),
then the trials left in the global budget are split by each task's share of the
model's time, weight times best latency (``allocation.py``): a kernel the model
spends little time in gets few trials, or none (below ``min_share`` of the model's time).

Early stopping: a task whose best has not improved by ``min_improvement`` (a fraction)
over its last ``stop_after_trials`` measurements stops there (0: never), its trials left
unspent: the search has settled, and more of the same costs time without gain.
"""
import statistics

from rvm.meta_schedule.arg_info import entry_prim_func
from rvm.meta_schedule.builder.builder import BuilderInput, BuildFuture
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
        self.progress = []  # (trials measured, best latency) after each batch
        self.measured_this_run = 0
        self.measured = {}  # candidate hash -> RunnerInput, this run's valid candidates


class _Batch:
    """A batch of candidates of one task, and its build once submitted (a BuildFuture)."""

    def __init__(self, task, candidates):
        self.task = task
        self.candidates = candidates
        self.build = None


class TaskScheduler:
    """Base class: subclasses choose the next task in ``next_task_id``.

    ``remeasure_top_k`` candidates per task are measured again at the end, in
    ``remeasure_rounds`` rounds (0: never); ``allocate_by_share``: trials split by each
    task's share of the model's time, none for a share below ``min_share``;
    ``stop_after_trials`` and ``min_improvement``: early stopping (module docstring)."""

    def __init__(self, remeasure_top_k=3, remeasure_rounds=3, allocate_by_share=True,
                 min_share=0.03, stop_after_trials=32, min_improvement=0.01):
        if int(remeasure_top_k) < 0 or int(remeasure_rounds) < 0:
            raise ValueError(f"remeasure_top_k and remeasure_rounds must be >= 0, got "
                             f"{remeasure_top_k} and {remeasure_rounds}")
        if not 0 <= float(min_share) < 1 or not 0 <= float(min_improvement) < 1 \
                or int(stop_after_trials) < 0:
            raise ValueError(f"expected min_share and min_improvement in [0, 1) and "
                             f"stop_after_trials >= 0, got {min_share}, {min_improvement} "
                             f"and {stop_after_trials}")
        self.tasks = []
        self._busy = ()
        self.remeasure_top_k = int(remeasure_top_k)
        self.remeasure_rounds = int(remeasure_rounds)
        self.allocate_by_share = bool(allocate_by_share)
        self.min_share = float(min_share)
        self.stop_after_trials = int(stop_after_trials)
        self.min_improvement = float(min_improvement)

    def next_task_id(self):
        """The index of the task to tune next (only tasks not done), or -1."""
        raise NotImplementedError

    def _live(self):
        """The tasks not done (and not on their way: see ``_next_batch``)."""
        return [k for k, t in enumerate(self.tasks) if not t.done and k not in self._busy]

    def tune(self, tasks, task_weights, max_trials_global, max_trials_per_task,
             num_trials_per_iter, builder, runner, database, cost_model, log,
             measure_callbacks):
        """Tunes ``tasks`` (TuneContexts); returns the database."""
        self.tasks = []
        self._busy = ()
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
            self._measure_baselines(builder, runner, measure_callbacks)
            self._allocate(max_trials_global, max_trials_per_task)
        # The pipeline (module docstring): a batch compiles while the next one is searched.
        ready = building = None
        while True:
            if ready is None:
                ready = self._next_batch(max_trials_global, num_trials_per_iter, None)
                if ready is None:
                    break
            building = self._submit(ready, builder)
            ready = self._next_batch(max_trials_global, num_trials_per_iter, building)
            self._complete(building, runner, measure_callbacks)
        for task in self.tasks:
            self._remeasure(task, builder, runner, database)
        for task in self.tasks:
            task.row.done = True
            task.context.post_tuning()
        return database

    def _next_batch(self, max_trials_global, num_trials_per_iter, building):
        """The next batch, searched: a ``_Batch`` of the task ``next_task_id`` picks, or None
        when the budget is spent or no task can go next. While ``building`` (a batch) is on its
        way, its candidates count as spent and its task cannot be picked."""
        busy = () if building is None else (building.task.task_id,)
        while True:
            total = sum(t.context.search_strategy.trials for t in self.tasks)
            left = max_trials_global - total - (0 if building is None else
                                                len(building.candidates))
            if left <= 0:
                return None
            self._busy = busy
            try:
                k = self.next_task_id() if self._live() else -1
            finally:
                self._busy = ()
            if k < 0:
                return None
            task = self.tasks[k]
            self.log.info(f'TaskScheduler picks Task #{k}: "{task.context.task_name}"')
            limit = min(left, num_trials_per_iter)
            candidates = task.context.search_strategy.generate_measure_candidates(limit=limit)
            if candidates:
                return _Batch(task, candidates)
            self._finish(task, "its search space has no new candidates"
                         if task.context.search_strategy.remaining else "")

    def _measure_baselines(self, builder, runner, measure_callbacks):
        """Every live task's first batch, its baselines (no search: they are known), built in
        one go, then measured task by task."""
        batches = []
        for k in self._live():
            candidates = self.tasks[k].context.search_strategy.generate_measure_candidates(
                limit=0)
            if candidates:
                batches.append(_Batch(self.tasks[k], candidates))
        inputs = [self._builder_input(b.task, c) for b in batches for c in b.candidates]
        self.log.info(f"Sending {len(inputs)} baseline(s) of {len(batches)} task(s) to builder")
        built = iter(builder.submit(inputs).result())
        for batch in batches:
            done = [next(built) for _ in batch.candidates]
            batch.build = BuildFuture.of(done)
            self._complete(batch, runner, measure_callbacks)

    @staticmethod
    def _builder_input(task, candidate):
        context = task.context
        return BuilderInput(candidate.sch.mod, context.target,
                            lowered=lowered_module(candidate.sch, context.layout_free),
                            layout_free=context.layout_free)

    def _submit(self, batch, builder):
        """Starts building ``batch`` (see ``Builder.submit``); returns it."""
        self.log.info(f"Sending {len(batch.candidates)} sample(s) to builder")
        batch.build = builder.submit([self._builder_input(batch.task, c)
                                      for c in batch.candidates])
        return batch

    def _complete(self, batch, runner, measure_callbacks):
        """Waits for ``batch``'s build, measures it (nothing else runs meanwhile: the search
        has returned and nothing compiles), records it and decides whether its task is done."""
        task, candidates = batch.task, batch.candidates
        built, results = self._measure(task, candidates, batch.build.result(), runner)
        for callback in measure_callbacks:
            callback.apply(self, task.task_id, candidates, built, [r for r, _ in results])
        self._account(task, candidates, results)
        if not task.context.search_strategy.remaining:
            self._finish(task, "")
        elif self._settled(task):
            self._finish(task, f"its best improved by less than {self.min_improvement:.0%} "
                               f"over its last {self.stop_after_trials} trials")

    def _settled(self, task):
        """Whether the task's best gained less than ``min_improvement`` over its last
        ``stop_after_trials`` measurements (early stopping)."""
        if self.stop_after_trials == 0 or not task.progress:
            return False
        trials, best = task.progress[-1]
        before = [b for t, b in task.progress if t <= trials - self.stop_after_trials]
        if not before or before[-1] is None or best is None:
            return False
        return best > before[-1] * (1.0 - self.min_improvement)

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
        counts = allocate(shares, caps, left, self.min_share)
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

    def _measure(self, task, candidates, built, runner):
        """Measures the ``built`` candidates (BuilderResults): [(RunnerResult, RunnerInput or
        None)] in order, a failed build as a RunnerResult with the builder's message."""
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
        task.progress.append((task.measured_this_run, task.row.best))
        self.log.info(f'[Updated] Task #{task.task_id}: "{context.task_name}"')
        self.log.table([t.row for t in self.tasks])
        self.log.bar(task.row, strategy.max_trials)

    def _finalists(self, task, database):
        """The records of the task's final comparison, on this machine's fingerprint (that of
        its best record): the ``remeasure_top_k`` fastest by their own measurement, the
        best the database ranks (a finalist of an earlier run, say) and the default
        kernel's record."""
        strategy = task.context.search_strategy
        ranked = database.get_top_k(strategy.workload, 1)
        if not ranked:
            return []
        fingerprint = ranked[0].fingerprint
        valid = [r for r in database.records_of(strategy.workload)
                 if r.is_valid and r.fingerprint == fingerprint]
        finalists = sorted(valid, key=lambda r: r.best_run_sec)[:self.remeasure_top_k]
        default = [r for r in valid if strategy.default_hash is not None
                   and r.candidate_hash == strategy.default_hash]
        for record in ranked + default[:1]:
            if not any(record is f for f in finalists):
                finalists.append(record)
        return finalists

    def _runner_inputs(self, task, records, builder):
        """A RunnerInput per record: this run's, or the record's schedule built again (the
        kernel cache makes that cheap); None for one that no longer builds."""
        context = task.context
        out = [task.measured.get(r.candidate_hash) for r in records]
        missing = [k for k, runner_input in enumerate(out) if runner_input is None]
        schedules = []
        for k in missing:
            try:
                schedules.append(records[k].as_schedule())
            except (ValueError, TypeError, IndexError, KeyError, RuntimeError):
                schedules.append(None)
        inputs = [BuilderInput(sch.mod, context.target,
                               lowered=lowered_module(sch, context.layout_free),
                               layout_free=context.layout_free)
                  for sch in schedules if sch is not None]
        built = iter(builder.build(inputs))
        for k, sch in zip(missing, schedules):
            result = None if sch is None else next(built)
            if result is not None and result.error_msg is None:
                out[k] = RunnerInput.from_builder_result(
                    result, context.search_strategy.args_info, "main", task.reference)
        return out

    def _remeasure(self, task, builder, runner, database):
        """The final comparison of the task (see the module docstring)."""
        if self.remeasure_top_k == 0 or self.remeasure_rounds == 0 or task.reference is None \
                or task.reference.error_msg is not None or task.measured_this_run == 0:
            return  # (nothing measured: the last comparison stands)
        finalists = self._finalists(task, database)
        if len(finalists) < 2:
            return
        pairs = [(r, i) for r, i in zip(finalists, self._runner_inputs(task, finalists,
                                                                       builder)) if i]
        if len(pairs) < 2:
            return
        strategy = task.context.search_strategy
        fingerprint = pairs[0][0].fingerprint
        self.log.info(f'Task #{task.task_id} "{task.context.task_name}": comparing its '
                      f"{len(pairs)} finalists, "
                      f"{self.remeasure_rounds} alternating round(s)")
        rounds = [[] for _ in pairs]
        runs = [[] for _ in pairs]
        for r in range(self.remeasure_rounds):
            order = [(k + r) % len(pairs) for k in range(len(pairs))]  # each round rotated
            futures = runner.run([pairs[k][1] for k in order])
            for k, future in zip(order, futures):
                result = future.result()
                # A finalist that fails now (a lost worker) misses the round.
                if result.error_msg is None and result.fingerprint in (None, fingerprint) \
                        and result.run_secs:
                    rounds[k].append(statistics.median(result.run_secs))
                    runs[k].extend(result.run_secs)
        final = {}
        for (record, _), figures, secs in zip(pairs, rounds, runs):
            if secs:
                database.commit_remeasurement(record, secs)
            if len(figures) == self.remeasure_rounds:
                final[record] = figures
        if len(final) >= 2:
            database.commit_final_comparison(strategy.workload, final)
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
