"""fuzz/replay.py, the tool that replays a campaign's saved inputs: it must reach the stage
the campaign counted for each input and time every step, on both engines."""
import pathlib
import re
import subprocess
import sys

from fuzz.tir_seeds import tir_seeds

ROOT = pathlib.Path(__file__).resolve().parents[2]
STEP = re.compile(r"^  (load|run \(native\)|run \(python\))\s+([\d.]+) s wall\s+([\d.]+) s cpu"
                  r"  (.*)$")


def _replay(*paths):
    out = subprocess.run([sys.executable, str(ROOT / "fuzz" / "replay.py"), *map(str, paths)],
                         capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    steps = {}
    for path in paths:
        steps[str(path)] = []
    current = None
    for line in out.stdout.splitlines():
        if line.split(" (")[0] in steps:
            current = line.split(" (")[0]
            continue
        match = STEP.match(line)
        assert match, f"unexpected line {line!r} in\n{out.stdout}"
        steps[current].append((match.group(1), float(match.group(3)), match.group(4)))
    return steps


def test_replay_times_each_step_and_names_the_stage(tmp_path):
    _, data, _ = next(s for s in tir_seeds() if s[0] == "matmul_symbolic")
    good = tmp_path / "good.input"
    good.write_bytes(data)
    bad_crc = tmp_path / "crc.input"
    corrupt = bytearray(data)
    corrupt[len(corrupt) // 2] ^= 0xFF
    bad_crc.write_bytes(bytes(corrupt))
    truncated = tmp_path / "truncated.input"
    truncated.write_bytes(data[:40])

    steps = _replay(good, bad_crc, truncated)

    ran = steps[str(good)]
    assert [s[0] for s in ran] == ["load", "run (native)", "run (python)"]
    assert ran[0][2] == "loaded"
    assert ran[1][2] == "ran" and ran[2][2] == "ran", ran
    assert ran[0][1] > 0  # the load compiled the kernels: its CPU time counts the compiler
    [(step, _, outcome)] = steps[str(bad_crc)]
    assert step == "load" and outcome.startswith("rejected_crc: "), outcome
    [(step, _, outcome)] = steps[str(truncated)]
    assert step == "load" and outcome.startswith(("rejected_format: ", "rejected_crc: ")), outcome
