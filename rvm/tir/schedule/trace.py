"""Trace: the instructions a schedule ran and the random decisions it made.

A trace prints as a Python function that redoes the schedule (``print(sch.trace)``),
serializes to JSON (``as_json``/``apply_json_to_schedule``), and replays on a
fresh Schedule of the same module (``apply_to_schedule``); sampling
instructions reuse their recorded decision. ``with_decision`` makes a trace
with one decision changed: the tuner's way of exploring nearby schedules.

>>> # print(sch.trace)
>>> # from rvm import tir
>>> # def apply_trace(sch: tir.Schedule) -> None:
>>> #   b0 = sch.get_block(name="C", func_name="main")
>>> #   l1, l2, l3 = sch.get_loops(block=b0)
"""
import json

from rvm.ir.expr import PrimExpr
from rvm.tir.expr import IntImm
from rvm.tir.index_map import IndexMap, index_expr_text
from rvm.tir.schedule.instruction import Instruction, get_kind
from rvm.tir.schedule.rv import BlockRV, ExprRV, LoopRV
from rvm.tir.schedule.trace_codec import (
    attr_from_json, attr_to_json, expr_from_json, expr_to_json, python_literal,
)
from rvm.tir.stmt_functor import substitute

_PREFIX = ((BlockRV, "b"), (LoopRV, "l"), (ExprRV, "v"))


def _is_rv(x):
    return isinstance(x, (BlockRV, LoopRV, ExprRV))


def _rv_prefix(rv):
    for cls, prefix in _PREFIX:
        if isinstance(rv, cls):
            return prefix
    raise TypeError(f"not a random variable: {rv!r}")


def _rvs_in(value):
    """The random variables an input refers to (directly, in lists, or in expressions)."""
    if _is_rv(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [rv for v in value for rv in _rvs_in(v)]
    if isinstance(value, PrimExpr):
        found = []
        substitute(value, lambda v: found.append(v) if isinstance(v, ExprRV) else None)
        return found
    return []


class Trace:
    """``insts`` (Instructions in the order they ran) and ``decisions`` ({Instruction:
    decision} for sampling instructions)."""

    def __init__(self, insts=(), decisions=None):
        self.insts = list(insts)
        self.decisions = dict(decisions or {})

    def get_decision(self, inst):
        """The decision recorded for ``inst``, or None."""
        return self.decisions.get(inst)

    def append(self, inst, decision=None):
        """Adds an instruction (and its decision) at the end."""
        self.insts.append(inst)
        if decision is not None:
            self.decisions[inst] = decision

    def pop(self):
        """Removes and returns the last instruction (None if empty)."""
        if not self.insts:
            return None
        inst = self.insts.pop()
        self.decisions.pop(inst, None)
        return inst

    def _kept(self, remove_postproc):
        if not remove_postproc:
            return list(self.insts)
        out = []
        for inst in self.insts:
            if inst.kind.name == "EnterPostproc":
                break
            out.append(inst)
        return out

    # -- replay ------------------------------------------------------------------------
    def apply_to_schedule(self, sch, remove_postproc=False, decision_provider=None):
        """Runs the instructions on ``sch``, reusing recorded decisions.

        ``decision_provider(inst, inputs, attrs, decision) -> decision`` may change
        decisions on the fly.
        """
        rv_map = {}

        def translate(value):
            if _is_rv(value):
                if value not in rv_map:
                    raise ValueError(f"trace uses {value!r} before an instruction defines it")
                return rv_map[value]
            if isinstance(value, list):
                return [translate(v) for v in value]
            if isinstance(value, PrimExpr) and not isinstance(value, IntImm):
                return substitute(value, lambda v: rv_map.get(v) if isinstance(v, ExprRV)
                                  else None)
            return value

        for inst in self._kept(remove_postproc):
            inputs = [translate(v) for v in inst.inputs]
            decision = self.decisions.get(inst)
            if decision_provider is not None:
                decision = decision_provider(inst, inputs, list(inst.attrs), decision)
            outputs = inst.kind.apply(sch, inputs, list(inst.attrs), decision)
            if len(outputs) != len(inst.outputs):
                raise ValueError(f"replaying {inst.kind.name}: it returned {len(outputs)} "
                                 f"results, the trace recorded {len(inst.outputs)}")
            for old, new in zip(inst.outputs, outputs):
                rv_map[old] = new

    def with_decision(self, inst, decision, remove_postproc):
        """A new trace with ``inst``'s decision replaced by ``decision``."""
        if not any(i is inst for i in self.insts):
            raise ValueError(f"with_decision: {inst!r} is not an instruction of this trace")
        insts = self._kept(remove_postproc)
        decisions = {i: d for i, d in self.decisions.items() if any(i is k for k in insts)}
        decisions[inst] = decision
        return Trace(insts, decisions)

    def simplified(self, remove_postproc):
        """The trace without pure instructions whose results nothing uses."""
        used = set()
        kept = []
        for inst in reversed(self._kept(remove_postproc)):
            if inst.kind.is_pure and not any(o in used for o in inst.outputs):
                continue
            kept.append(inst)
            for value in inst.inputs:
                used.update(_rvs_in(value))
        kept.reverse()
        return Trace(kept, {i: d for i, d in self.decisions.items() if i in set(kept)})

    # -- Python ------------------------------------------------------------------------
    def _names(self, insts):
        names = {}
        for inst in insts:
            for rv in inst.outputs:
                if _is_rv(rv) and rv not in names:
                    names[rv] = f"{_rv_prefix(rv)}{len(names)}"
        return names

    def as_python(self, remove_postproc=False):
        """The trace as Python statements (``sch.<primitive>(...)`` calls)."""
        insts = self._kept(remove_postproc)
        names = self._names(insts)
        lines = []
        for inst in insts:
            lines.append(_python_call(inst, names, self.decisions.get(inst)))
        return lines

    def __str__(self):
        body = self.as_python() or ["pass"]
        return "\n".join(["# from rvm import tir", "def apply_trace(sch: tir.Schedule) -> None:"]
                         + ["  " + line for line in body])

    def __repr__(self):
        return str(self)

    def show(self):
        """Prints the trace."""
        print(str(self))

    # -- JSON --------------------------------------------------------------------------
    def as_json(self, remove_postproc=False):
        """``[instructions, decisions]``: instructions as ``[kind, inputs, attrs, outputs]``
        with handles named (``"b0"``), decisions as ``[instruction index, decision]``."""
        insts = self._kept(remove_postproc)
        names = self._names(insts)
        out_insts, out_decisions = [], []
        for k, inst in enumerate(insts):
            inputs = [_input_to_json(v, names) for v in inst.inputs]
            attrs = [attr_to_json(a) for a in inst.attrs]
            out_insts.append([inst.kind.name, inputs, attrs, [names[o] for o in inst.outputs]])
            if inst in self.decisions:
                out_decisions.append([k, self.decisions[inst]])
        return [out_insts, out_decisions]

    @staticmethod
    def apply_json_to_schedule(json_obj, sch):
        """Replays a trace serialized by ``as_json`` on ``sch``."""
        trace_from_json(json_obj).apply_to_schedule(sch, remove_postproc=False)


def _input_to_json(value, names):
    if _is_rv(value):
        return names[value]
    if isinstance(value, str):
        return json.dumps(value)  # quoted, unlike the names of handles (as TVM writes it)
    if isinstance(value, PrimExpr):
        return {"expr": expr_to_json(value, names)}
    if isinstance(value, (list, tuple)):
        return [_input_to_json(v, names) for v in value]
    return value


def trace_from_json(json_obj):
    """The Trace of a JSON object made by ``Trace.as_json`` (ValueError when malformed)."""
    if not isinstance(json_obj, (list, tuple)) or len(json_obj) != 2:
        raise ValueError("a trace in JSON is [instructions, decisions]")
    raw_insts, raw_decisions = json_obj
    rvs = {}
    insts = []

    def rv_input(value):
        if isinstance(value, str) and value.startswith('"'):
            return json.loads(value)
        if isinstance(value, str):
            if value not in rvs:
                raise ValueError(f"trace JSON uses {value!r} before defining it")
            return rvs[value]
        if isinstance(value, dict) and "expr" in value:
            return expr_from_json(value["expr"], rvs)
        if isinstance(value, list):
            return [rv_input(v) for v in value]
        return value

    for entry in raw_insts:
        if not isinstance(entry, (list, tuple)) or len(entry) != 4:
            raise ValueError(f"a trace instruction in JSON is [kind, inputs, attrs, outputs], "
                             f"got {entry!r}")
        kind_name, inputs, attrs, outputs = entry
        kind = get_kind(kind_name)
        inputs = [rv_input(v) for v in inputs]
        attrs = [attr_from_json(kind, k, a) for k, a in enumerate(attrs)]
        made = []
        for name in outputs:
            rv = {"b": BlockRV, "l": LoopRV, "v": ExprRV}[name[0]]()
            if isinstance(rv, ExprRV):
                rv.name_hint = name
            rvs[name] = rv
            made.append(rv)
        insts.append(Instruction(kind, inputs, attrs, made))
    decisions = {}
    for entry in raw_decisions:
        index, decision = entry
        if not 0 <= index < len(insts):
            raise ValueError(f"trace JSON has a decision for instruction {index}, out of range")
        decisions[insts[index]] = decision
    return Trace(insts, decisions)


def _python_call(inst, names, decision):
    kind = inst.kind
    args = kind.split_args(inst.inputs, inst.attrs)
    parts = []
    for p in kind.params:
        value = args[p.name]
        if p.role == "varargs":
            parts.extend(_python_value(v, names) for v in value)
        elif p.role == "inputs":
            parts.append(f"{p.name}=[{', '.join(_python_value(v, names) for v in value)}]")
        else:
            parts.append(f"{p.name}={_python_value(value, names)}")
    if kind.has_decision:
        parts.append(f"decision={python_literal(decision)}")
    call = f"sch.{kind.method}({', '.join(parts)})"
    outs = [names[o] for o in inst.outputs]
    if kind.outputs is None or (kind.outputs == "many" and not outs):
        return call
    if kind.outputs == "one":
        return f"{outs[0]} = {call}"
    if len(outs) == 1:
        return f"({outs[0]},) = {call}"
    return f"{', '.join(outs)} = {call}"


def _python_value(value, names):
    if _is_rv(value):
        return names[value]
    if isinstance(value, PrimExpr) and not isinstance(value, IntImm):
        return index_expr_text(value, {id(rv): n for rv, n in names.items()})
    if isinstance(value, IndexMap):
        return value.lambda_text()
    return python_literal(value)
