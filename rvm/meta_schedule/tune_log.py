"""What tuning tells the user: log lines in ``work_dir/logs``, a progress bar on a
terminal, and a per-task summary table.

Log lines go to ``work_dir/logs/tune.log`` and to the ``rvm.meta_schedule``
logger. When standard error is a terminal, a one-line progress bar (task,
trials, best latency and GFLOPS) is redrawn in place and the summary table
(TVM's columns) is printed under it when tuning ends; otherwise the table is
in the log only.

>>> rows = [TaskRow(0, "main", 4194304, 1)]
>>> rows[0].record(5.481e-6, 64)
>>> print(summary_table(rows).splitlines()[2])
 0 | main | 4194304 |      1 |       765.2443 |       5.4810 |                5.4810 |     64 |
"""
import logging
import pathlib
import sys
import time

LOGGER_NAME = __name__.rpartition(".")[0]  # the package's logger: rvm.meta_schedule
_BAR_WIDTH = 24


class TaskRow:
    """One task's line of the summary: id, name, FLOP, weight, best latency, trials, done."""

    def __init__(self, task_id, name, flop, weight):
        self.task_id = task_id
        self.name = name
        self.flop = int(flop)
        self.weight = weight
        self.best = None  # seconds
        self.trials = 0
        self.done = False
        self.failures = 0

    def record(self, best, trials):
        """Updates the best latency (seconds, None when unknown) and the trial count."""
        if best is not None and (self.best is None or best < self.best):
            self.best = best
        self.trials = trials

    @property
    def gflops(self):
        return None if self.best is None else self.flop / self.best / 1e9


def summary_table(rows):
    """TVM's task table: ID | Name | FLOP | Weight | Speed (GFLOPS) | Latency (us) |
    Weighted Latency (us) | Trials | Done, then the totals."""
    header = ["ID", "Name", "FLOP", "Weight", "Speed (GFLOPS)", "Latency (us)",
              "Weighted Latency (us)", "Trials", "Done"]
    cells = []
    for row in rows:
        if row.best is None:
            speed = latency = weighted = "N/A"
        else:
            speed = f"{row.gflops:.4f}"
            latency = f"{row.best * 1e6:.4f}"
            weighted = f"{row.best * 1e6 * row.weight:.4f}"
        weight = f"{row.weight:g}"
        cells.append([str(row.task_id), row.name, str(row.flop), weight, speed, latency,
                      weighted, str(row.trials), "Y" if row.done else ""])
    widths = [max(len(h), *(len(c[k]) for c in cells)) if cells else len(h)
              for k, h in enumerate(header)]
    lines = [" | ".join(h.rjust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("-" * len(lines[0]))
    for c in cells:
        lines.append(" | ".join(v.rjust(w) for v, w in zip(c, widths)).rstrip())
    lines.append("-" * len(lines[0]))
    total_trials = sum(r.trials for r in rows)
    total_latency = sum(r.best * 1e6 * r.weight for r in rows if r.best is not None)
    lines.append(f"Total trials: {total_trials}")
    lines.append(f"Total latency (us): {total_latency:g}")
    return "\n".join(lines)


class TuneLog:
    """Logging and progress for one tuning run in ``work_dir``.

    ``progress`` is None (a bar when stderr is a terminal), True or False;
    ``stream`` receives the bar (default: stderr).
    """

    def __init__(self, work_dir, progress=None, stream=None):
        self.work_dir = pathlib.Path(work_dir)
        self.log_dir = self.work_dir / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.logger = logging.getLogger(LOGGER_NAME)
        self.handler = logging.FileHandler(self.log_dir / "tune.log", encoding="utf-8")
        self.handler.setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(message)s"))
        self.handler.setLevel(logging.DEBUG)
        self.logger.addHandler(self.handler)
        if self.logger.level == logging.NOTSET or self.logger.level > logging.INFO:
            self.logger.setLevel(logging.INFO)
        self.stream = stream or sys.stderr
        self.progress = (hasattr(self.stream, "isatty") and self.stream.isatty()
                         if progress is None else bool(progress))
        self.start = time.perf_counter()
        self._bar_shown = False
        self.info(f"Logging directory: {self.log_dir}")

    def info(self, message):
        self.logger.info(message)

    def warning(self, message):
        self.logger.warning(message)

    def table(self, rows):
        """Logs the summary table."""
        self.info("\n" + summary_table(rows))

    def bar(self, row, budget):
        """Redraws the progress bar for ``row`` (a TaskRow) against ``budget`` trials."""
        if not self.progress:
            return
        done = min(1.0, row.trials / budget) if budget else 1.0
        filled = int(round(done * _BAR_WIDTH))
        best = "best N/A" if row.best is None else \
            f"best {row.best * 1e6:.2f} us, {row.gflops:.1f} GFLOPS"
        elapsed = time.perf_counter() - self.start
        text = (f"\r[tune] #{row.task_id} {row.name[:24]:24s} |{'#' * filled}"
                f"{'.' * (_BAR_WIDTH - filled)}| {row.trials}/{budget} trials, {best}, "
                f"{elapsed:.0f} s")
        self.stream.write(text.ljust(100))
        self.stream.flush()
        self._bar_shown = True

    def close(self, rows=None):
        """Ends the bar line, logs the summary table (and prints it under the bar),
        detaches the log file."""
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
        if rows is not None:
            self.table(rows)
            if self.progress:
                self.stream.write(summary_table(rows) + "\n")
                self.stream.flush()
        self.logger.removeHandler(self.handler)
        self.handler.close()
