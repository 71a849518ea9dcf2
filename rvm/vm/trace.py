"""Timelines of a VM call in the Chrome trace-event format (Perfetto, chrome://tracing).

``traced_call`` runs one call in the stepping loop (rvm.vm.stepper, on either
engine: the same callees on the same storage) and records one complete event
(``"ph": "X"``) per call of a kernel or builtin, with its callee, Relax binding,
argument shapes and the bytes of its tensor arguments and result, and one per
VM function activation, so nested VM calls are nested slices. All events carry
the process id and the (OS) id of the thread that ran the call; ``ts`` and ``dur``
are microseconds from the start of the call. The events are sorted by start
(a parent before its children), the order the format expects per thread.
"""
import json
import os
import threading
import time

from rvm.bytecode.function import FuncKind
from rvm.runtime.container import ShapeTuple
from rvm.runtime.ndarray import NDArray
from rvm.vm.stepper import SteppedCall


def _shape_and_bytes(value):
    if isinstance(value, NDArray):
        return list(value.shape), int(value.numpy().nbytes)
    if isinstance(value, ShapeTuple):
        return list(value), 0
    return None, 0


def traced_call(vm, fidx, args):
    """Runs VM function ``fidx`` on checked ``args`` in the stepping loop; returns (result,
    events, samples) with ``samples`` as a profile's: {absolute pc: [calls, seconds]}."""
    ex = vm.executable
    table = ex.func_table
    call = SteppedCall(vm, fidx, args)
    pid, tid = os.getpid(), threading.get_native_id()
    origin = call.frames[0].started
    events, samples = [], {}

    def event(name, cat, start, seconds, fields):
        events.append({"name": name, "cat": cat, "ph": "X", "pid": pid, "tid": tid,
                       "ts": (start - origin) * 1e6, "dur": seconds * 1e6, "args": fields})

    def where(frame_fidx, pc):
        source = ex.source_map.get(pc)
        return {"function": table[frame_fidx].name, "position": pc - table[frame_fidx].start,
                "binding": source[1] if source else ""}

    with call.running():
        while not call.done:
            done = call.advance()
            if done.returned:
                end = time.perf_counter()
                frame = done.frame
                event(table[frame.fidx].name, "vm_function", frame.started,
                      end - frame.started, {"function": table[frame.fidx].name})
            elif done.callee is not None:
                info = table[done.callee]
                shapes, nbytes = [], 0
                for value in [*done.argv, done.result]:
                    shape, size = _shape_and_bytes(value)
                    if shape is not None:
                        shapes.append(shape)
                    nbytes += size
                fields = where(done.frame.fidx, done.pc)
                fields.update(shapes=shapes, bytes=nbytes)
                cat = "kernel" if info.kind == FuncKind.KERNEL else "builtin"
                event(info.name, cat, done.started, done.seconds, fields)
                site = samples.setdefault(done.pc, [0, 0.0])
                site[0] += 1
                site[1] += done.seconds
    events.sort(key=lambda e: (e["ts"], -e["dur"]))
    events.insert(0, {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                      "args": {"name": f"rvm VM ({vm.engine} engine, stepped)"}})
    return call.result, events, samples


def write_trace(path, events):
    """Writes ``events`` as a trace-event JSON file (the object form, microsecond times)."""
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
