"""The parent of a fuzz campaign: runs ``--jobs`` children for the budget, watches each input
against two deadlines, and counts crashes, ASan reports, hangs and the children's stage counts.

A child killed by a signal is a crash; one exiting with ``ASAN_EXIT`` an ASan report
(counted as a crash too, its report kept); an input using more than ``--hang-seconds`` of
CPU time (the child's and that of the processes it started, such as a compiler, read from
/proc) or running longer than ``--hang-wall-seconds`` a hang (the child and its processes
are killed). Each time, the input is saved to the crash directory and a new child starts
from the next seed. Children write their output to ``<crash-dir>/<kind>-<j>.log``.
"""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

from fuzz.asan import ASAN_EXIT, asan_env
from fuzz.child import read_progress
from fuzz.stages import LOADER_STAGES, PARSER_STAGES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STARTUP_SECONDS = 600  # building the seed executables, before the first input


_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """The fields of /proc/<pid>/stat after the command name (the state is field 0), or
    None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cpu_ns(pids):
    """CPU time (ns) processes ``pids`` and their reaped children have used, from /proc."""
    total = 0
    for fields in filter(None, map(_stat, pids)):
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total * 1_000_000_000 // _TICK


def _descendants(pid):
    """Process ids started (transitively) by ``pid``, read from /proc."""
    parent_of = {}
    for entry in os.listdir("/proc"):
        fields = _stat(entry) if entry.isdigit() else None
        if fields:
            parent_of[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        children = [c for c, pp in parent_of.items() if pp == p]
        found += children
        frontier += children
    return found


class Slot:
    """One child at a time in slot ``index``; restarted after a crash or hang."""

    def __init__(self, index, args, crash_dir, env):
        self.args, self.crash_dir, self.env = args, crash_dir, env
        self.state = os.path.join(crash_dir, f"{args.kind}-{index}")
        self.proc, self.stop_sent = None, False

    def start(self, seed, inject):
        self.seed, self.launched = seed, time.monotonic()
        for suffix in (".progress", ".findings.json"):
            if os.path.exists(self.state + suffix):
                os.remove(self.state + suffix)
        workdir = self.state + ".cwd"  # files a hostile input makes a global write land here
        os.makedirs(workdir, exist_ok=True)
        memory = self.args.memory_mb << 20

        def limits():
            if not self.args.asan:  # ASan maps terabytes of shadow: it has its own limit
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        self.log = open(self.state + ".log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "fuzz", "fuzz_loader.py"), "--child",
             self.args.kind, str(seed), self.state, inject],
            cwd=workdir, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=limits)

    def poll(self, totals, findings, stopping):
        """Checks the child; True when the slot is free again."""
        progress = read_progress(self.state + ".progress")
        started = progress.started
        if self.proc.poll() is None:
            if progress.start_ns and self._over_deadline(progress):
                self._kill()
                totals["hangs"] += 1
                self._save(totals, f"hang-{self.seed}-{started - 1}")
                return self._finish(totals, findings)
            if not started and (stopping or time.monotonic() - self.launched > STARTUP_SECONDS):
                self._kill()  # still building its seeds: no input is lost
                if not stopping:
                    totals["harness_errors"] += 1
                return self._finish(totals, findings)
            if stopping and not self.stop_sent:
                self.proc.send_signal(signal.SIGTERM)
                self.stop_sent = True
            return False
        code = self.proc.returncode
        if code == 0:
            return self._finish(totals, findings)
        if code == ASAN_EXIT and "rss limit exhausted" in self._asan_report():
            totals["out_of_memory"] += 1  # ASan's memory limit, not a memory error
            self._save(totals, f"oom-{self.seed}-{started - 1}")
            return self._finish(totals, findings)
        if code < 0 or code == ASAN_EXIT:
            totals["crashes"] += 1
            name = f"crash-{self.seed}-{started - 1}-" + (f"sig{-code}" if code < 0 else "asan")
            if code == ASAN_EXIT:
                totals["asan_reports"] += 1
                if os.path.exists(self._asan_path()):
                    os.replace(self._asan_path(),
                               os.path.join(self.crash_dir, name + ".asan.txt"))
            self._save(totals, name)
            return self._finish(totals, findings)
        totals["harness_errors"] += 1  # the harness itself failed: its traceback is in the log
        return self._finish(totals, findings)

    def _over_deadline(self, progress):
        """Whether the running input has passed the wall-clock or the CPU-time deadline."""
        wall = time.monotonic_ns() - progress.start_ns
        if wall > self.args.hang_wall_seconds * 1e9:
            return True
        if wall * (os.cpu_count() or 1) <= self.args.hang_seconds * 1e9:
            return False  # no process tree uses more CPU than the cores give it: skip /proc
        used = _cpu_ns([self.proc.pid] + _descendants(self.proc.pid)) - progress.start_cpu_ns
        return used > self.args.hang_seconds * 1e9

    def _kill(self):
        victims = _descendants(self.proc.pid)  # before the child dies and they are reparented
        for pid in [self.proc.pid] + victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def _save(self, totals, name):
        source = self.state + ".input"
        if os.path.exists(source):
            target = os.path.join(self.crash_dir, name + ".input")
            with open(source, "rb") as f, open(target, "wb") as out:
                out.write(f.read())
            totals["saved"].append(target)

    def _asan_path(self):
        return os.path.join(self.crash_dir, "asan-logs", f"asan.{self.proc.pid}")

    def _asan_report(self):
        try:
            with open(self._asan_path(), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _finish(self, totals, findings):
        progress = read_progress(self.state + ".progress")
        totals["executions"] += progress.started
        for stage, count in progress.counts.items():
            totals[stage] = totals.get(stage, 0) + count
        totals["max_cpu_ns"] = max(totals["max_cpu_ns"], progress.max_cpu_ns)
        totals["max_wall_ns"] = max(totals["max_wall_ns"], progress.max_wall_ns)
        try:
            with open(self.state + ".findings.json") as f:
                for key, entry in json.load(f).items():
                    known = findings.setdefault(key, dict(entry, count=0))
                    known["count"] += entry["count"]
        except (OSError, ValueError):
            pass
        self.log.close()
        self.proc, self.stop_sent = None, False
        return True


def run(args):
    """Runs the campaign of ``args`` (see fuzz_loader.py); prints and returns the summary."""
    crash_dir = os.path.abspath(args.crash_dir)
    os.makedirs(os.path.join(crash_dir, "asan-logs"), exist_ok=True)
    stages = PARSER_STAGES if args.kind == "parser" else LOADER_STAGES
    totals = {"executions": 0, **dict.fromkeys(stages, 0), "internal_errors": 0,
              "crashes": 0, "asan_reports": 0, "hangs": 0, "harness_errors": 0, "saved": [],
              "max_cpu_ns": 0, "max_wall_ns": 0}
    findings = {}
    inject = os.environ.get("RVM_FUZZ_INJECT", "")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="rvm-fuzz-cache-") as cache:
        env = dict(os.environ, PYTHONPATH=ROOT, RVM_CACHE_DIR=cache)
        env.pop("RVM_FUZZ_INJECT", None)
        if args.asan:
            env.update(asan_env(os.path.join(crash_dir, "asan-logs"), args.memory_mb))
        slots = [Slot(j, args, crash_dir, env) for j in range(args.jobs)]
        seeds = iter(range(args.seed, args.seed + 10 ** 9))
        deadline = started + args.seconds
        while True:
            stopping = time.time() >= deadline or (
                args.executions is not None and totals["executions"] + sum(
                    read_progress(s.state + ".progress").started for s in slots if s.proc)
                >= args.executions)
            for slot in slots:
                if slot.proc is None and not stopping:
                    seed = next(seeds)
                    slot.start(seed, inject if seed == args.seed else "")
                elif slot.proc is not None:
                    slot.poll(totals, findings, stopping)
            if stopping and all(s.proc is None for s in slots):
                break
            time.sleep(0.1)
    summary = {"kind": args.kind, "seconds": round(time.time() - started, 1), "jobs": args.jobs,
               "asan": bool(args.asan), **{k: v for k, v in totals.items() if k in (
                   "executions", *stages)},
               "internal_errors": totals["internal_errors"], "crashes": totals["crashes"],
               "asan_reports": totals["asan_reports"], "hangs": totals["hangs"],
               "harness_errors": totals["harness_errors"],
               "slowest_input_cpu_seconds": round(totals["max_cpu_ns"] / 1e9, 3),
               "slowest_input_wall_seconds": round(totals["max_wall_ns"] / 1e9, 3),
               "internal_kinds": {k: v for k, v in findings.items() if v["kind"] == "internal"},
               "engine_mismatches": {k: v["count"] for k, v in findings.items()
                                     if v["kind"] == "mismatch"},
               "saved": totals["saved"]}
    print(json.dumps(summary, indent=1))
    failed = (totals["crashes"] or totals["hangs"] or totals["harness_errors"]
              or totals["internal_errors"])
    return 1 if failed else 0
