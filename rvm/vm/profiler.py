"""Profiles and instruments of the VM's call sites.

Both engines observe a call site (any CALL but a VM-to-VM call) only while an
instrument or a profile is set, and pay one test per call otherwise. A profile
is the per-site count and time of one run; ``ProfileReport`` names each site
by function, position, callee and source binding.
"""
import csv
import io
import json

NO_OP, SKIP_RUN = 0, 1  # what an instrument returns before a call
ROW_KEYS = ("function", "position", "binding", "callee", "calls", "total", "mean", "share")


class ProfileReport:
    """Per-call-site timings of one run: callee, calls, total and mean time, share.

    ``rows`` holds dicts with keys function, position, binding, callee, calls,
    total (seconds), mean (seconds) and share (of the run's wall time). They are
    built when first read, so ``profile()`` itself costs little more than the run.
    """

    def __init__(self, func_name, ex, samples, total, result):
        """``samples`` maps absolute instruction indices to [calls, seconds]."""
        self.func_name = func_name
        self.total = total
        self.result = result
        self._ex = ex
        self._samples = samples
        self._rows = None

    @property
    def rows(self):
        """The call sites, slowest first."""
        if self._rows is None:
            self._rows = sorted((self._row(pc, calls, seconds)
                                 for pc, (calls, seconds) in self._samples.items()),
                                key=lambda r: -r["total"])
        return self._rows

    def _row(self, pc, calls, seconds):
        ex = self._ex
        info = ex.func_table[ex.function_at(pc)]
        source = ex.source_of(pc)
        return {"function": info.name, "position": pc - info.start,
                "binding": source[1] if source else "",
                "callee": ex.func_table[ex.instructions[pc].field("func")].name,
                "calls": calls, "total": seconds, "mean": seconds / calls,
                "share": seconds / self.total if self.total else 0.0}

    def table(self):
        """The report as a text table, slowest call site first."""
        head = (f"{'callee':<32} {'site':<20} {'calls':>7} {'total us':>11} "
                f"{'mean us':>10} {'share':>7}")
        lines = [f"profile of '{self.func_name}': {self.total * 1e6:.1f} us", head,
                 "-" * len(head)]
        for r in self.rows:
            site = f"{r['function']}@{r['position']}"
            if r["binding"]:
                site = f"{r['function']}:{r['binding']}"
            lines.append(f"{r['callee'][:32]:<32} {site[:20]:<20} {r['calls']:>7} "
                         f"{r['total'] * 1e6:>11.2f} {r['mean'] * 1e6:>10.2f} "
                         f"{r['share']:>7.1%}")
        return "\n".join(lines)

    def to_csv(self, path=None):
        """The rows as CSV text (times in seconds), written to ``path`` if given."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=ROW_KEYS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        return _written(path, out.getvalue())

    def to_json(self, path=None):
        """The report as JSON text (function, total seconds, rows), written to ``path`` if
        given."""
        text = json.dumps({"function": self.func_name, "total": self.total,
                           "rows": self.rows}, indent=1)
        return _written(path, text)

    def __str__(self):
        return self.table()


def _written(path, text):
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text
