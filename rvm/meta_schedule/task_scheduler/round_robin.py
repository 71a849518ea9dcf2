"""RoundRobin: tasks take turns."""
from rvm.meta_schedule.task_scheduler.task_scheduler import TaskScheduler


class RoundRobin(TaskScheduler):
    """Tasks take turns."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._last = -1

    def next_task_id(self):
        live = self._live()
        if not live:
            return -1
        later = [k for k in live if k > self._last]
        self._last = later[0] if later else live[0]
        return self._last
