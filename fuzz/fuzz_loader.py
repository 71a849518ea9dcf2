"""Fuzzes the executable loader on both engines, or the script parser, for a fixed budget.

    python fuzz/fuzz_loader.py loader --seconds 600 [--executions N] [--jobs 2] [--seed 0]
    python fuzz/fuzz_loader.py parser --seconds 600 [--crash-dir fuzz-crashes]

``loader``: mutants of saved executables (one with a kernel library, one
calling every C builtin), half raw byte mutants, half structure-aware (a
decoded section edited, the file re-encoded so checksums hold), each loaded
with ``Executable.from_bytes`` and, when it loads, run on the python and the
native engine. ``parser``: mutants of script-form programs parsed with
``rvm.script.from_source``; anything but ParseError/DiagnosticError escaping
is an internal error (its type and message are counted).

Executions run in a child process watched by this one: a child killed by a
signal is a crash, one making no progress for ``--hang-seconds`` a hang; the
input it was running is saved to ``--crash-dir`` and the child restarted
(``--jobs`` children run at once, each from its own seed). A program raising
an internal error is saved there too (the first of each kind).
The summary gives executions (``loaded``: loader mutants that passed the
verifier and ran), crashes, hangs and internal errors.
"""
import argparse
import collections
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


# ---- seeds -----------------------------------------------------------------------------

def loader_seeds():
    """Bytes of the seed executables."""
    import numpy as np  # noqa: F401
    from rvm import relax
    from tests.vm.test_hostile import _program
    from tests.e2e.test_safe_loading import AddOne
    return [relax.build(AddOne, target="c").save_to_bytes(), _program().save_to_bytes()]


PARSER_SEEDS = ["""from rvm.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add_one(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n,), "float32")
        Y = T.match_buffer(y, (n,), "float32")
        for i in T.grid(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor(("n",), "float32"), w: R.Tensor((4, 4), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), "float32"))
            z = R.matmul(w, R.permute_dims(w))
            c = R.add(z, R.const(1.0, "float32"))
            R.output(y, c)
        return (y, c)
"""]


# ---- mutators --------------------------------------------------------------------------

def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        what = rng.random()
        pos = rng.randrange(len(data)) if data else 0
        if what < 0.6 and data:
            data[pos] = rng.randrange(256)
        elif what < 0.8:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif data:
            del data[pos:pos + rng.randint(1, 16)]
    return bytes(data)


def _mutate_value(rng, value, depth=0):
    """A random edit somewhere inside a decoded msgpack value."""
    if isinstance(value, list) and value and depth < 6:
        i = rng.randrange(len(value))
        choice = rng.random()
        if choice < 0.7:
            value[i] = _mutate_value(rng, value[i], depth + 1)
        elif choice < 0.85:
            del value[i]
        else:
            value.insert(i, _mutate_value(rng, value[i], depth + 1))
        return value
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, -1, 1, value + 1, value - 1, 1 << 31, 1 << 62, -(1 << 63),
                           (1 << 64) - 1, rng.randrange(-1000, 1000)])
    if isinstance(value, bytes):
        return mutate_bytes(rng, value) if rng.random() < 0.9 else b""
    if isinstance(value, str):
        return rng.choice(["", "main", "vm.builtin.alloc_storage", "float32", "x" * 300,
                           value + "\x00", value[::-1]])
    return rng.choice([None, 0, "", [], b"", 1.5])


def mutate_structure(rng, data):
    import msgpack
    from rvm.bytecode.serialize import _HEADER, _SECTION, SECTIONS
    import zlib
    pos, payloads = _HEADER.size, []
    for _ in SECTIONS:
        _, length, _ = _SECTION.unpack_from(data, pos)
        pos += _SECTION.size
        payloads.append(msgpack.unpackb(data[pos:pos + length], raw=False))
        pos += length
    k = rng.randrange(len(payloads))
    if SECTIONS[k] == "modules" and payloads[k] and rng.random() < 0.7:
        payloads[k] = _mutate_kernel_library(rng, payloads[k])
    else:
        payloads[k] = _mutate_value(rng, payloads[k])
    out = [data[:_HEADER.size]]
    for index, value in enumerate(payloads):
        payload = msgpack.packb(value, use_bin_type=True)
        out.append(_SECTION.pack(index, len(payload), zlib.crc32(payload)))
        out.append(payload)
    return b"".join(out)


def _mutate_kernel_library(rng, modules):
    """Edits the header or the serialized TIR inside a kernel library blob."""
    import struct
    import msgpack
    entry = rng.choice(modules)
    blob = entry[2]
    parts, offset = [], 8
    while offset + 8 <= len(blob):
        (size,) = struct.unpack_from("<Q", blob, offset)
        parts.append(blob[offset + 8:offset + 8 + size])
        offset += 8 + size
    if len(parts) == 4:
        if rng.random() < 0.5:
            header = _mutate_value(rng, [json.loads(parts[0])])
            header = header[0] if header else {}
            parts[0] = json.dumps(header, default=lambda o: o.hex()).encode()
        else:
            try:
                tir = msgpack.unpackb(parts[2], raw=False)
                parts[2] = msgpack.packb(_mutate_value(rng, tir), use_bin_type=True)
            except Exception:
                parts[2] = mutate_bytes(rng, parts[2])
        entry[2] = blob[:8] + b"".join(struct.pack("<Q", len(p)) + p for p in parts)
    return modules


def mutate_text(rng, text):
    tokens = ["(", ")", "[", "]", ":", ",", "T.int64()", "R.Tensor", "float32", "int8", "x",
              "1" * 30, "-", "*", "\n", "    ", "T.grid(", "R.const(1e400)", "with ", "def ",
              "R.call_tir(", "T.float32(", "'", '"', "\\", "lambda", "((((((((((", "0x",
              "R.Tuple(", "T.axis.remap(", "\"float33\"", "@R.function", "@T.prim_func"]
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(chars))
        what = rng.random()
        if what < 0.4:
            chars[pos:pos + rng.randint(1, 6)] = []
        elif what < 0.8:
            chars[pos:pos] = list(rng.choice(tokens))
        else:
            chars[pos] = rng.choice("()[]:,.=+-*/ 0123456789abcxyzTR\n\"'")
    return "".join(chars)


# ---- the child: runs executions, reports progress -------------------------------------

def child(kind, seed, state_path):
    import warnings
    import numpy as np
    warnings.filterwarnings("ignore")  # mutated sources make Python warn about literals
    rng = random.Random(seed)
    state = pathlib.Path(state_path)
    internal = collections.Counter()
    if kind == "loader":
        from rvm.bytecode.executable import Executable
        from rvm.runtime.device import cpu
        from rvm.vm.machine import VirtualMachine
        seeds = loader_seeds()
        x = np.arange(8, dtype="float32")
    else:
        from rvm.script import from_source
        from rvm.support.errors import DiagnosticError
    # the input being run is kept in one open file (rewritten in place): opening a file per
    # execution cost half the harness's time
    fd = os.open(state.with_suffix(".input"), os.O_RDWR | os.O_CREAT, 0o644)

    def remember(data):
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    count, loaded, written = 0, 0, time.monotonic()
    fresh = state.with_suffix(".fresh")
    while True:
        if kind == "loader":
            base = rng.choice(seeds)
            data = mutate_bytes(rng, base) if rng.random() < 0.5 else mutate_structure(rng, base)
            remember(data)
            try:
                ex = Executable.from_bytes(data, "fuzz")
            except Exception:
                ex = None
            if ex is not None:
                loaded += 1
                for engine in ("python", "native"):
                    try:
                        vm = VirtualMachine(ex, cpu(), engine=engine)
                        for name in ex.vm_function_names()[:2]:
                            info = ex.function_info(name)
                            try:
                                vm[name](*([x] * info.num_args))
                            except Exception:
                                pass
                    except Exception:
                        pass
        else:
            text = mutate_text(rng, rng.choice(PARSER_SEEDS))
            remember(text.encode())
            try:
                from_source(text)
            except DiagnosticError:
                pass
            except Exception as err:  # an internal error: not a ParseError
                key = f"{type(err).__name__}: {str(err)[:80]}"
                if key not in internal:  # keep the first program of each kind of internal error
                    (state.parent / f"internal-{seed}-{count}.py").write_text(text)
                internal[key] += 1
        count += 1
        if time.monotonic() - written > 0.2:
            written = time.monotonic()
            # written whole then renamed: a child killed at any moment leaves a readable state
            fresh.write_text(json.dumps({"count": count, "loaded": loaded, "internal": internal}))
            os.replace(fresh, state)


# ---- the parent: budget, crashes, hangs ------------------------------------------------

def run(args):
    crash_dir = pathlib.Path(args.crash_dir)
    crash_dir.mkdir(parents=True, exist_ok=True)
    totals = {"executions": 0, "loaded": 0, "crashes": 0, "hangs": 0, "harness_errors": 0}
    internal = collections.Counter()
    started = time.time()
    deadline = started + args.seconds
    seeds = iter(range(args.seed, args.seed + 10**9))
    slots = [_Slot(crash_dir / f"{args.kind}-{j}.state") for j in range(args.jobs)]
    while time.time() < deadline and (args.executions is None or
                                      totals["executions"] + sum(s.last for s in slots)
                                      < args.executions):
        for slot in slots:
            if slot.proc is None:
                slot.start(args.kind, next(seeds))
            else:
                slot.watch(args.hang_seconds, totals, crash_dir, internal)
        time.sleep(0.5)
    for slot in slots:
        slot.stop(totals, crash_dir, internal)
    print(json.dumps({"kind": args.kind, "seconds": round(time.time() - started, 1),
                      "jobs": args.jobs, **totals,
                      "internal_errors": sum(internal.values()),
                      "internal_kinds": dict(internal.most_common(10))}, indent=1))
    return 1 if totals["crashes"] or totals["hangs"] or totals["harness_errors"] else 0


class _Slot:
    """One child process running executions from one seed; restarted after a crash or hang."""

    def __init__(self, state):
        self.state, self.proc, self.last = state, None, 0

    def start(self, kind, seed):
        self.seed = seed
        self.state.write_text(json.dumps({"count": 0, "loaded": 0, "internal": {}}))
        self.proc = subprocess.Popen([sys.executable, __file__, "--child", kind, str(seed),
                                      str(self.state)], cwd=ROOT,
                                     env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.last, self.last_change = 0, time.time()

    def watch(self, hang_seconds, totals, crash_dir, internal):
        if self.proc.poll() is None:
            count = _count(self.state)
            if count != self.last:
                self.last, self.last_change = count, time.time()
            elif time.time() - self.last_change > hang_seconds and self.last > 0:
                self.proc.kill()
                self.proc.wait()
                totals["hangs"] += 1
                _save(self.state, crash_dir, f"hang-{self.seed}")
                self._finish(totals, internal)
            return
        if self.proc.returncode < 0:
            totals["crashes"] += 1
            _save(self.state, crash_dir, f"crash-{self.seed}-sig{-self.proc.returncode}")
        elif self.proc.returncode > 0:  # the harness itself failed (its traceback is on stderr)
            totals["harness_errors"] += 1
        self._finish(totals, internal)

    def stop(self, totals, crash_dir, internal):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait()
            self._finish(totals, internal)
        else:
            self.watch(0, totals, crash_dir, internal)

    def _finish(self, totals, internal):
        done = json.loads(self.state.read_text())
        totals["executions"] += done["count"]
        totals["loaded"] += done["loaded"]
        internal.update(done["internal"])
        self.proc, self.last = None, 0


def _count(state):
    try:
        return json.loads(state.read_text())["count"]
    except (ValueError, OSError):
        return 0


def _save(state, crash_dir, name):
    source = state.with_suffix(".input")
    if source.exists():
        (crash_dir / name).write_bytes(source.read_bytes())


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["loader", "parser"])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--executions", type=int, help="stop early after this many executions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="child processes run at once")
    parser.add_argument("--hang-seconds", type=float, default=60)
    parser.add_argument("--crash-dir", default="fuzz-crashes")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
