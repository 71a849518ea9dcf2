"""A direct TIR interpreter over numpy arrays, for checking what kernels compute.

Slow by design (one Python step per element); tests use tiny shapes.
"""
import math

import numpy as np

from rvm import tir

_UNARY = {"tir.exp": math.exp, "tir.log": math.log, "tir.sqrt": math.sqrt,
          "tir.tanh": math.tanh, "tir.fabs": abs, "tir.erf": math.erf,
          "tir.sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)), "tir.floor": math.floor,
          "tir.ceil": math.ceil}
_BINARY = {tir.Add: lambda a, b: a + b, tir.Sub: lambda a, b: a - b,
           tir.Mul: lambda a, b: a * b, tir.FloorDiv: lambda a, b: a // b,
           tir.FloorMod: lambda a, b: a % b, tir.Min: min, tir.Max: max,
           tir.EQ: lambda a, b: a == b, tir.NE: lambda a, b: a != b,
           tir.LT: lambda a, b: a < b, tir.LE: lambda a, b: a <= b,
           tir.GT: lambda a, b: a > b, tir.GE: lambda a, b: a >= b,
           tir.And: lambda a, b: a and b, tir.Or: lambda a, b: a or b}


class _Machine:
    def __init__(self, arrays):
        self.env = {}
        self.arrays = arrays  # id(buffer.data) -> numpy array

    def array(self, buf):
        return self.arrays[id(buf.data)]

    def expr(self, e):
        if isinstance(e, tir.Var):
            return self.env[id(e)]
        if isinstance(e, (tir.IntImm, tir.FloatImm)):
            return e.value
        if type(e) in _BINARY:
            return _BINARY[type(e)](self.expr(e.a), self.expr(e.b))
        if isinstance(e, tir.Div):
            a, b = self.expr(e.a), self.expr(e.b)
            return a / b if e.dtype.is_float else int(a / b)
        if isinstance(e, tir.Not):
            return not self.expr(e.a)
        if isinstance(e, tir.Cast):
            v = self.expr(e.value)
            return float(v) if e.dtype.is_float else int(v)
        if isinstance(e, tir.Select):
            return self.expr(e.true_value) if self.expr(e.condition) else \
                self.expr(e.false_value)
        if isinstance(e, tir.BufferLoad):
            return self.array(e.buffer)[tuple(self.expr(i) for i in e.indices)].item()
        if isinstance(e, tir.Call):
            if e.op == "tir.if_then_else":
                c, t, f = e.args
                return self.expr(t) if self.expr(c) else self.expr(f)
            if e.op == "tir.check_index":  # as rvm.tir.eval defines it
                value, low, high = (self.expr(a) for a in e.args[:3])
                if not low <= value < high:
                    raise IndexError(e.args[3].value.format(value, low, high))
                return value
            if e.op == "tir.pow":
                return self.expr(e.args[0]) ** self.expr(e.args[1])
            return _UNARY[e.op](self.expr(e.args[0]))
        raise NotImplementedError(type(e).__name__)

    def stmt(self, s):
        if isinstance(s, tir.SeqStmt):
            for item in s.seq:
                self.stmt(item)
        elif isinstance(s, tir.For):
            lo = self.expr(s.min)
            for v in range(lo, lo + self.expr(s.extent)):
                self.env[id(s.loop_var)] = v
                self.stmt(s.body)
        elif isinstance(s, tir.BlockRealize):
            if not self.expr(s.predicate):
                return
            block = s.block
            values = [self.expr(v) for v in s.iter_values]
            for iv, v in zip(block.iter_vars, values):
                self.env[id(iv.var)] = v
            for buf in block.alloc_buffers:
                if id(buf.data) not in self.arrays:
                    shape = tuple(self.expr(d) for d in buf.shape)
                    self.arrays[id(buf.data)] = np.zeros(shape, buf.dtype.numpy_dtype)
            if block.init is not None and all(
                    v == self.expr(iv.dom.min) for iv, v in zip(block.iter_vars, values)
                    if iv.iter_type == tir.IterVar.CommReduce):
                self.stmt(block.init)
            self.stmt(block.body)
        elif isinstance(s, tir.BufferStore):
            idx = tuple(self.expr(i) for i in s.indices)
            self.array(s.buffer)[idx] = self.expr(s.value)
        elif isinstance(s, tir.IfThenElse):
            if self.expr(s.condition):
                self.stmt(s.then_case)
            elif s.else_case is not None:
                self.stmt(s.else_case)
        elif isinstance(s, tir.LetStmt):
            self.env[id(s.var)] = self.expr(s.value)
            self.stmt(s.body)
        elif isinstance(s, tir.Evaluate):
            self.expr(s.value)
        else:
            raise NotImplementedError(type(s).__name__)


def run(func, *arrays):
    """Runs a PrimFunc on numpy arrays (one per buffer parameter, written in place).

    Symbolic shape variables are bound from the arrays' shapes.
    """
    machine = _Machine({})
    buffers = [func.buffer_map[p] for p in func.params]
    if len(buffers) != len(arrays):
        raise ValueError(f"expected {len(buffers)} arrays, got {len(arrays)}")
    for buf, arr in zip(buffers, arrays):
        machine.arrays[id(buf.data)] = arr
        for dim, n in zip(buf.shape, arr.shape):
            if isinstance(dim, tir.Var):
                machine.env[id(dim)] = n
    machine.stmt(func.body)
    return arrays
