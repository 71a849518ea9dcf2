"""vm.profile(..., trace=): the Chrome trace-event timeline; ProfileReport CSV/JSON export."""
import csv
import io
import json

import numpy as np
import pytest

from rvm.vm.machine import VirtualMachine
from rvm.vm.profiler import ROW_KEYS
from tests.vm.test_debugger import _args, _expected, _ex, _vm

REQUIRED = {"X": ("name", "cat", "ph", "ts", "dur", "pid", "tid"),
            "M": ("name", "ph", "pid", "tid", "args")}


def check_trace_events(doc):
    """The trace-event format's rules: the object form, required keys per phase, numeric
    non-negative times, timestamps monotonic per thread, and complete events properly
    nested (a slice that starts inside another ends inside it)."""
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    by_thread = {}
    for ev in doc["traceEvents"]:
        assert ev["ph"] in REQUIRED, ev
        missing = [k for k in REQUIRED[ev["ph"]] if k not in ev]
        assert not missing, (missing, ev)
        if ev["ph"] == "X":
            assert ev["ts"] >= 0 and ev["dur"] >= 0
            by_thread.setdefault((ev["pid"], ev["tid"]), []).append(ev)
    for events in by_thread.values():
        stamps = [ev["ts"] for ev in events]
        assert stamps == sorted(stamps)
        open_ends = []
        for ev in events:
            while open_ends and open_ends[-1] <= ev["ts"]:
                open_ends.pop()
            end = ev["ts"] + ev["dur"]
            assert not open_ends or end <= open_ends[-1] + 1e-3, ev   # nested, not crossing
            open_ends.append(end)
    return by_thread


@pytest.fixture
def traced(tmp_path, vm_engine):
    path = tmp_path / "out.json"
    report = _vm().profile("main", *_args(True), trace=str(path))
    return report, json.loads(path.read_text())


def test_the_trace_is_valid_and_nests_the_vm_call(traced):
    report, doc = traced
    np.testing.assert_allclose(report.result.numpy(), _expected(True), rtol=1e-6)
    (events,) = check_trace_events(doc).values()
    assert [e["name"] for e in events if e["cat"] == "vm_function"] == ["main", "helper"]
    main, helper = [e for e in events if e["cat"] == "vm_function"]
    kernels = [e for e in events if e["cat"] == "kernel"]
    assert [k["name"] for k in kernels] == ["add1", "fused_multiply_add", "subtract"]
    fused = kernels[1]
    assert fused["args"]["function"] == "helper" and fused["args"]["binding"] == "h2"
    assert fused["args"]["shapes"] == [[3], [3], [3]] and fused["args"]["bytes"] == 36
    assert helper["ts"] <= fused["ts"] and fused["ts"] + fused["dur"] <= helper["ts"] + \
        helper["dur"]
    assert main["ts"] == 0 and main["dur"] >= helper["dur"]
    assert {e["tid"] for e in events} == {doc["traceEvents"][0]["tid"]}


def test_the_profile_of_a_traced_call_counts_every_call_site(traced):
    report, doc = traced
    calls = sum(1 for e in doc["traceEvents"] if e.get("cat") in ("kernel", "builtin"))
    assert sum(r["calls"] for r in report.rows) == calls
    assert {r["binding"] for r in report.rows if r["callee"] == "fused_multiply_add"} == {"h2"}


def test_the_check_catches_a_broken_trace(traced):
    _, doc = traced
    bad = json.loads(json.dumps(doc))
    del bad["traceEvents"][1]["dur"]
    with pytest.raises(AssertionError):
        check_trace_events(bad)
    crossing = json.loads(json.dumps(doc))
    crossing["traceEvents"][2]["dur"] = 1e9    # a child outliving its parent
    with pytest.raises(AssertionError):
        check_trace_events(crossing)


def test_profile_report_exports_csv_and_json(tmp_path):
    report = _vm().profile("main", *_args(False))
    rows = list(csv.DictReader(io.StringIO(report.to_csv(tmp_path / "p.csv"))))
    assert tuple(rows[0]) == ROW_KEYS and len(rows) == len(report.rows)
    assert [r["callee"] for r in rows] == [r["callee"] for r in report.rows]
    assert float(rows[0]["total"]) == pytest.approx(report.rows[0]["total"])
    assert (tmp_path / "p.csv").read_text() == report.to_csv()
    doc = json.loads(report.to_json(tmp_path / "p.json"))
    assert doc["function"] == "main" and doc["rows"] == report.rows
    assert json.loads((tmp_path / "p.json").read_text()) == doc


def test_a_bad_trace_path_is_a_clear_error(tmp_path):
    vm = VirtualMachine(_ex())
    with pytest.raises(OSError):
        vm.profile("main", *_args(True), trace=str(tmp_path / "no" / "such" / "dir.json"))
    np.testing.assert_allclose(vm["main"](*_args(True)).numpy(), _expected(True), rtol=1e-6)
