"""C rendering of ``tir.check_index(index, low, high, message)``: an index read from a tensor
(take, gather, scatter) that must lie in ``[low, high)``.

The kernel never returns from inside its loops (OpenMP forbids it), so a failure is
recorded and reported once the loops are done: the flag code of the message, the index and
its bounds (the first failure recorded wins), then ``IndexError: <kernel>: <message>``.

Outside a ``#pragma omp simd`` loop the check is a predicted branch to a cold function.
Inside one (a gather's inner loop), a branch to a function would keep the loop from
vectorizing, so the loop instead keeps the least and the greatest index it read (min/max
reductions of the pragma, vectorized) and compares them with the bounds after the loop; the
bounds must then not change inside the loop (else the branch is used).
"""
from rvm.codegen.c.prologue import c_string
from rvm.tir import expr as E
from rvm.tir.free_vars import free_vars
from rvm.tir.stmt_functor import post_order_visit
from rvm.tir.op import index_message_parts

# The in-range path inline; a failure (cold) records the first failing index and its bounds
# (only the thread that sets the flag from 0 writes them) and goes on with ``lo``.
CHECK_INDEX_HELPERS = r"""
__attribute__((cold, noinline)) static int64_t rvm_index_fail(int64_t v, int64_t lo,
                                                               int64_t hi, int* flag, int code,
                                                               int64_t* bad) {
  int none = 0;
  if (__atomic_compare_exchange_n(flag, &none, code, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    bad[0] = v;
    bad[1] = lo;
    bad[2] = hi;
  }
  return lo;
}
static inline int64_t rvm_check_index(int64_t v, int64_t lo, int64_t hi, int* flag, int code,
                                      int64_t* bad) {
  if (__builtin_expect(v >= lo && v < hi, 1)) return v;
  return rvm_index_fail(v, lo, hi, flag, code, bad);
}
"""


class _SimdFrame:
    """The index checks of one ``#pragma omp simd`` loop: per (bounds, message), the names
    of the least and greatest index read."""

    def __init__(self, outer_vars, pragma_at):
        self.outer_vars = outer_vars  # ids of the variables defined outside the loop
        self.pragma_at = pragma_at  # where the loop's pragma line is in the emitter's lines
        self.sites = {}  # (low C, high C, code) -> (min name, max name)


class IndexCheckMixin:
    """The parts of CEmitter that render index checks (uses MemoryMixin's flag codes)."""

    def init_index_checks(self):
        self.index_codes = {}  # message parts -> flag code
        self.simd_frames = []
        self.check_names = 0
        self.done_checks = set()  # checks a condition evaluated before this expression
        self.check_records = []  # per condition being rendered: the checks it renders

    def checks_in(self, render):
        """``(render(), checks)``: a condition's C text, its index checks then counting as
        done (a branch's ``take`` index normalized as ``i < 0 ? i + n : i`` is checked once)
        until ``forget_checks(checks)``."""
        self.check_records.append([])
        try:
            text = render()
        finally:
            checks = set(self.check_records.pop()) - self.done_checks
        self.done_checks |= checks
        return text, checks

    def forget_checks(self, checks):
        """Ends what ``checks_in`` started (the branches are rendered)."""
        self.done_checks -= checks

    def _index_code(self, parts):
        code = self.index_codes.get(parts)
        if code is None:
            code = self.add_flag_message("{}".join(parts))
            self.index_codes[parts] = code
        return code

    def render_index_failures(self):
        """Lines (inside the kernel's failure branch) setting the message of a failed index
        check from its recorded index and bounds; the file's text is never a printf format."""
        lines = []
        for parts, code in self.index_codes.items():
            args = ", ".join(c_string(p) + (f", (long long)rvm_bad[{k}]" if k < 3 else "")
                             for k, p in enumerate(parts))
            lines += [f"if (rvm_oob == {code}) {{",
                      "  char rvm_msg[1024];",
                      f"  snprintf(rvm_msg, sizeof(rvm_msg), \"%s%lld%s%lld%s%lld%s\", {args});",
                      "  RVMAPISetLastError(rvm_msg);",
                      "  return -1;",
                      "}"]
        return lines

    def render_check_index(self, e):
        """The C expression of the check_index call ``e`` (its value: the index)."""
        if len(e.args) != 4 or not isinstance(e.args[3], E.StringImm):
            self.error(f"{e.op} takes an index, its bounds and a message, got "
                       f"{len(e.args)} arguments")
        for arg in e.args[:3]:
            if getattr(arg, "dtype", None) != "int64":
                self.error(f"{e.op} takes an int64 index and bounds, got "
                           f"{getattr(arg, 'dtype', type(arg).__name__)}")
        try:
            parts = index_message_parts(e.args[3].value)
        except ValueError as err:
            self.error(str(err))
        code = self._index_code((f"IndexError: {self.name}: {parts[0]}", *parts[1:]))
        index, low, high = (self.expr(a) for a in e.args[:3])
        key = (index, low, high, code)
        if key in self.done_checks:
            return f"({index})"
        for record in self.check_records:
            record.append(key)
        self.helpers.setdefault("rvm_check_index", CHECK_INDEX_HELPERS)
        frame = self.simd_frames[-1] if self.simd_frames else None
        # an index the loop does not change (take's row) keeps the branch: the C compiler
        # moves it out of the loop, which a reduction would keep it from doing
        if frame is not None and _invariant(e.args[1:3], frame) \
                and not _reads_memory(e.args[1:3]) and not _invariant(e.args[:1], frame):
            key = (low, high, code)
            if key not in frame.sites:
                self.check_names += 1
                frame.sites[key] = (f"rvm_ckmin_{self.check_names}",
                                    f"rvm_ckmax_{self.check_names}")
            least, greatest = frame.sites[key]
            return (f"({{ const int64_t rvm_cv = {index}; "
                    f"{least} = rvm_cv < {least} ? rvm_cv : {least}; "
                    f"{greatest} = rvm_cv > {greatest} ? rvm_cv : {greatest}; rvm_cv; }})")
        return f"rvm_check_index({index}, {low}, {high}, &rvm_oob, {code}, rvm_bad)"

    def open_simd_checks(self, loop_var, pragma_at):
        """Starts collecting the index checks of the simd loop over ``loop_var`` whose pragma
        is line ``pragma_at`` (call before rendering its body)."""
        self.simd_frames.append(_SimdFrame(set(self.names) - {id(loop_var)}, pragma_at))

    def close_simd_checks(self):
        """Declares the simd loop's least/greatest indices before its pragma (adding their
        reductions to it); returns the lines checking them, for after the loop."""
        frame = self.simd_frames.pop()
        if not frame.sites:
            return []
        at, indent = frame.pragma_at, "  " * self.indent
        names = [n for pair in frame.sites.values() for n in pair]
        least = ", ".join(f"{a} = INT64_MAX" for a, _ in frame.sites.values())
        greatest = ", ".join(f"{b} = INT64_MIN" for _, b in frame.sites.values())
        self.lines[at] += (f" reduction(min:{', '.join(names[0::2])})"
                           f" reduction(max:{', '.join(names[1::2])})")
        self.lines[at:at] = [f"{indent}int64_t {least};", f"{indent}int64_t {greatest};"]
        checks = []
        for (low, high, code), (a, b) in frame.sites.items():
            checks.append(f"if (RVM_UNLIKELY({a} < {low} || {b} >= {high})) "
                          f"rvm_index_fail({a} < {low} ? {a} : {b}, {low}, {high}, &rvm_oob, "
                          f"{code}, rvm_bad);")
        return checks


def _invariant(exprs, frame):
    return all(id(v) in frame.outer_vars for e in exprs for v in free_vars(e))


def _reads_memory(exprs):
    found = []

    def visit(node):
        if isinstance(node, (E.BufferLoad, E.Call)):
            found.append(node)

    for e in exprs:
        post_order_visit(e, visit)
    return bool(found)
