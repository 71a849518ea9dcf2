"""Profiling and instrumentation of the VM's packed calls.

Both work by wrapping the callees of a freshly decoded copy of the code, so the
plain interpreter loop pays nothing for them.
"""
import time

NO_OP, SKIP_RUN = 0, 1  # what an instrument returns before a call


def instrument_wrapper(instrument):
    """The wrap function of ``VirtualMachine.set_instrument``."""
    def wrap(callee, func_index, position, name):
        def instrumented(*args):
            if instrument(callee, name, True, None, *args) == SKIP_RUN:
                return None
            result = callee(*args)
            instrument(callee, name, False, result, *args)
            return result
        return instrumented
    return wrap


class ProfileReport:
    """Per-call-site timings of one run: callee, calls, total and mean time, share.

    ``rows`` holds dicts with keys function, position, binding, callee, calls,
    total (seconds), mean (seconds) and share (of the run's wall time).
    """

    def __init__(self, func_name):
        self.func_name = func_name
        self._sites = {}
        self.total = 0.0
        self.result = None

    def record(self, key, elapsed):
        site = self._sites[key]
        site[0] += 1
        site[1] += elapsed

    def add_site(self, key):
        self._sites.setdefault(key, [0, 0.0])

    def run(self, fn):
        start = time.perf_counter()
        self.result = fn()
        self.total = time.perf_counter() - start

    @property
    def rows(self):
        out = []
        for (function, position, callee, binding), (calls, total) in self._sites.items():
            if calls == 0:
                continue
            out.append({"function": function, "position": position, "binding": binding,
                        "callee": callee, "calls": calls, "total": total,
                        "mean": total / calls,
                        "share": total / self.total if self.total else 0.0})
        return sorted(out, key=lambda r: -r["total"])

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

    def __str__(self):
        return self.table()


def timing_wrapper(report, ex):
    """The wrap function of ``VirtualMachine.profile``: records into ``report``."""
    clock = time.perf_counter

    def wrap(callee, func_index, position, name):
        info = ex.func_table[func_index]
        source = ex.source_map.get(info.start + position)
        key = (info.name, position, name, source[1] if source else "")
        report.add_site(key)

        def timed(*args):
            start = clock()
            try:
                return callee(*args)
            finally:
                report.record(key, clock() - start)
        return timed
    return wrap
