"""Short budgets of the fuzz harnesses (the long runs and their figures: RELIABILITY.md), and
the harness attacked: an injected SIGSEGV, hang asleep or busy (on the very first input), internal error
and out-of-bounds write in a kernel under ASan must each be reported with the input saved."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from fuzz.asan import libasan

pytestmark = pytest.mark.slow  # campaigns of a few hundred inputs each
ROOT = pathlib.Path(__file__).resolve().parents[2]
LOADER = ("rejected_crc", "rejected_format", "rejected_verifier", "rejected_tir_verifier",
          "rejected_kernel", "compile_limit", "out_of_memory", "loaded")


def _fuzz(tmp_path, kind, executions, *extra, inject=None):
    """Runs a campaign until ``executions`` inputs (a budget of inputs, not seconds: the
    children build their seeds first, which takes longer on a loaded machine)."""
    env = dict(os.environ)
    env.pop("RVM_FUZZ_INJECT", None)
    if inject:
        env["RVM_FUZZ_INJECT"] = inject
    out = subprocess.run([sys.executable, str(ROOT / "fuzz" / "fuzz_loader.py"), kind,
                          "--seconds", "120", "--executions", str(executions),
                          "--crash-dir", str(tmp_path), *extra],
                         capture_output=True, text=True, timeout=240, cwd=ROOT, env=env)
    assert out.stdout, out.stderr[-2000:]
    return out.returncode, json.loads(out.stdout)


def _stopped(summary, stages):
    """Inputs accounted for: each stopped at one stage, crashed or hung."""
    return sum(summary[s] for s in stages) + summary["crashes"] + summary["hangs"] \
        + summary["internal_errors"]


def test_parser_campaign_counts_python_syntax_apart_from_rvms_parser(tmp_path):
    code, summary = _fuzz(tmp_path, "parser", 300)
    assert code == 0 and summary["crashes"] == summary["hangs"] == 0, summary
    assert summary["internal_errors"] == 0, summary["internal_kinds"]
    assert summary["slowest_input_cpu_seconds"] < 10, summary
    assert summary["slowest_input_wall_seconds"] > 0, summary
    stages = ("python_syntax_error", "rejected_by_parser", "parsed")
    assert summary["executions"] > 0 and all(summary[s] > 0 for s in stages), summary
    assert _stopped(summary, stages) == summary["executions"]


def test_loader_campaign_counts_each_stage(tmp_path):
    _, summary = _fuzz(tmp_path, "loader", 300)
    assert summary["crashes"] == summary["hangs"] == summary["harness_errors"] == 0, summary
    assert summary["executions"] > 0, summary
    assert summary["rejected_crc"] > 0 and summary["loaded"] > 0, summary
    # every input ended at exactly one load stage (or as an internal error)
    assert _stopped(summary, LOADER) == summary["executions"], summary
    assert summary["ran"] + summary["ran_with_error"] + summary["refused_at_link"] \
        == 2 * summary["loaded"], summary  # both engines ran each loaded mutant


def test_tir_campaign_mutates_kernels_past_the_checksum(tmp_path):
    _, summary = _fuzz(tmp_path, "tir", 5, "--hang-seconds", "2")
    assert summary["harness_errors"] == 0, summary
    assert summary["executions"] > 0 and summary["rejected_crc"] == 0, summary
    assert summary["executions"] - summary["rejected_format"] > 0, summary
    assert _stopped(summary, LOADER) == summary["executions"], summary


@pytest.mark.parametrize("what, counter, inputs", [("segv", "crashes", 2), ("hang", "hangs", 1),
                                                   ("spin", "hangs", 1),
                                                   ("internal", "internal_errors", 2)])
def test_an_injected_failure_is_reported_with_its_input(tmp_path, what, counter, inputs):
    # input 0: a hang before any progress was ever reported must still be caught; asleep
    # (``hang``) by the wall-clock deadline, busy (``spin``) by the CPU-time one
    wall = "3" if what == "hang" else "100"
    deadlines = ["--hang-seconds", "1.5", "--hang-wall-seconds", wall]
    code, summary = _fuzz(tmp_path, "parser", inputs, *deadlines, inject=f"{what}@0")
    assert code == 1 and summary[counter] == 1, summary
    if what == "internal":
        (kind,) = summary["internal_kinds"]
        assert "KeyError: 'injected internal error" in kind
        entry = summary["internal_kinds"][kind]
        assert os.path.exists(entry["input"]) and "Traceback" in entry["traceback"]
    else:
        (saved,) = summary["saved"]
        assert os.path.exists(saved) and "-0-0" in saved
    assert summary["executions"] >= inputs, summary  # after a crash, a new child went on


@pytest.mark.skipif(libasan() is None, reason="gcc has no libasan")
def test_an_out_of_bounds_write_in_a_kernel_is_an_asan_report(tmp_path):
    code, summary = _fuzz(tmp_path, "loader", 1, "--asan", inject="asan@0")
    assert code == 1 and summary["asan_reports"] == 1 and summary["crashes"] == 1, summary
    (saved,) = summary["saved"]
    report = pathlib.Path(saved.replace(".input", ".asan.txt")).read_text()
    assert "AddressSanitizer: heap-buffer-overflow" in report and "WRITE of size 1" in report
