"""GradientBased: trials go where they are expected to cut the weighted latency most."""
from rvm.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class GradientBased(TaskScheduler):
    """Trials go where they are expected to cut the total weighted latency most.

    Every task gets one batch first; then the task with the largest
    ``weight * best latency * (alpha + recent relative improvement)`` is
    picked, the improvement measured over the last ``window_size`` batches.
    """

    def __init__(self, alpha=0.2, window_size=3, seed=-1, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)
        self.window_size = int(window_size)

    def next_task_id(self):
        live = self._live()
        if not live:
            return -1
        fresh = [k for k in live if not self.tasks[k].history]
        if fresh:
            return fresh[0]
        best_score, best_k = -1.0, live[0]
        for k in live:
            t = self.tasks[k]
            history = [h for h in t.history if h is not None]
            if not history:
                return k
            latest = history[-1]
            window = history[-1 - self.window_size:]
            improvement = (window[0] - latest) / window[0] if window[0] else 0.0
            score = t.weight * latest * (self.alpha + improvement)
            if score > best_score:
                best_score, best_k = score, k
        return best_k
