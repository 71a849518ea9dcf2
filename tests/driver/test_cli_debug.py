"""``rvm debug``: a scripted session through stdin, and its errors."""
import json

import numpy as np
import pytest

from tests.driver.test_cli import rvm

MODEL = '''
from rvm.script import ir as I, relax as R

@I.ir_module
class Module:
    @R.function
    def helper(a: R.Tensor((3,), "float32"), w: R.Tensor((3,), "float32")):
        with R.dataflow():
            h = R.multiply(a, w)
            h2 = R.add(h, a)
            R.output(h2)
        return h2

    @R.function
    def main(cond: R.Tensor((), "bool"), x: R.Tensor((3,), "float32"),
             w: R.Tensor((3,), "float32")):
        cls = Module
        if cond:
            lv0 = R.add(x, x)
            y = cls.helper(lv0, w)
        else:
            lv1 = R.multiply(x, x)
            y = R.add(lv1, x)
        out = R.subtract(y, x)
        return out
'''


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_debug")
    (d / "model.py").write_text(MODEL)
    np.save(d / "cond.npy", np.array(True))
    np.save(d / "x.npy", np.array([0.5, -1.0, 2.0], "float32"))
    np.save(d / "w.npy", np.array([1.0, np.nan, -2.0], "float32"))
    built = rvm("build", "model.py", "-o", "model.rvm", cwd=d)
    assert built.returncode == 0, built.stderr
    return d


def debug(work, script, *options):
    return rvm("debug", "model.rvm", "-i", "cond.npy", "-i", "x.npy", "-i", "w.npy", *options,
               cwd=work, stdin=script)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_scripted_session(work, engine):
    script = "where\nb h2\nc\nwhere\np a\np %1\nregs\nlist\ns\nf\nn\nc\nq\n"
    out = debug(work, script, "--break", "lv0", "--engine", engine)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    blocks = text.split("(rvm) ")
    assert blocks[0].splitlines()[:2] == ["breakpoint 1", "[breakpoint] main@10 (lv0) kernel add1"]
    assert blocks[1] == "where\n#0 main@10 (lv0)\n"
    assert blocks[2] == "b h2\nbreakpoint 2\n"
    assert blocks[3].startswith("c\n[breakpoint] helper@7 (h2) kernel fused_multiply_add\n")
    assert blocks[4] == "where\n#0 main@11 (ret)\n#1 helper@7 (h2)\n"
    assert blocks[5] == "p a\ntensor[3] float32 min=-2 max=4 mean=1\n"
    assert "nan=1" in blocks[6]                         # w
    regs = blocks[7].splitlines()[1:]
    assert [line.split()[1] for line in regs] == ["a", "w", "alloc"]
    listing = blocks[8].splitlines()
    assert listing[1] == "@helper"
    assert [line for line in listing if line.startswith("=>")] == [
        "=>   7: call  fused_multiply_add  in: %0, %1, %3  dst: %void  ; h2"]
    assert blocks[9].startswith("s\n[step] helper@8 (return)")
    assert blocks[10].startswith("f\n[finish] main@12")
    assert blocks[11].startswith("n\n[step] main@13 (y)")
    assert blocks[12].startswith("c\n[done] main@30 (return)\nreturned: tensor[3] float32")
    assert blocks[13] == "q\n"


def test_the_nonfinite_watch_and_bad_commands(work):
    out = debug(work, "bogus\nb\nb nope\np zz\nb 9999\nc\nwatch off\nc\nc\n", "--watch-nonfinite")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "[nonfinite] helper@7 (h2) kernel fused_multiply_add"
    assert lines[1].startswith("  output: tensor[3] float32") and "nan=1" in lines[1]
    assert [line.startswith("  input:") for line in lines[2:4]] == [True, True]
    for message in ("error: unknown command 'bogus' (h for help)",
                    "error: b expects a binding, a kernel, N or FUNC@N",
                    "error: no binding or kernel named 'nope'",
                    "error: no live register 'zz' in helper",
                    "error: break_at: helper has instructions 0...8, got 9999"):
        assert message in lines, (message, lines)
    assert "[nonfinite] main@13 (y)" in lines        # the next output holding the NaN
    assert "non-finite watch off" in lines
    assert lines[-1] == "error: the debugged call has returned; start a new one"


def test_bad_inputs_and_breakpoints_are_one_line_errors(work):
    out = rvm("debug", "model.rvm", "-i", "x.npy", cwd=work, stdin="")
    assert out.returncode == 1 and "main(cond, x, w) takes 3 inputs, 1 given" in out.stderr
    out = debug(work, "", "--break", "nope")
    assert out.returncode == 1
    assert out.stderr.strip() == "rvm: error: no binding or kernel named 'nope'"


def test_profile_writes_a_trace(work):
    from tests.vm.test_trace import check_trace_events
    out = rvm("profile", "model.rvm", "-i", "cond.npy", "-i", "x.npy", "-i", "w.npy",
              "--trace", "out.json", cwd=work)
    assert out.returncode == 0, out.stderr
    assert "wrote out.json (Chrome trace-event JSON" in out.stdout
    assert "fused_multiply_add" in out.stdout     # the table is still printed
    doc = json.loads((work / "out.json").read_text())
    (events,) = check_trace_events(doc).values()
    assert {"add1", "fused_multiply_add", "subtract", "main", "helper"} <= \
        {e["name"] for e in events}


def test_a_call_failing_in_a_session_is_reported_and_the_shell_goes_on():
    import rvm
    from rvm.bytecode.builder import ExecBuilder
    from rvm.driver.cli_debug import debug_session
    from rvm.vm.machine import VirtualMachine

    def boom(x):
        raise ValueError("boom")

    rvm.register_func("test.cli_debug.boom", boom, override=True)
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("test.cli_debug.boom", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    lines = []
    debug_session(VirtualMachine(ib.get(), rvm.cpu()), "main", [1], ["regs", "c", "s", "h"],
                  out=lines.append)
    assert lines[0] == "[start] main@0"
    assert lines[3] == "%0                    int 1"
    assert lines[5] == "error: the call failed: ValueError: boom"
    assert lines[6].startswith("  in VM function 'main', instruction 0: call  "
                               "test.cli_debug.boom")
    assert lines[8] == "error: the debugged call has returned; start a new one"
    assert "p REG" in lines[10]
