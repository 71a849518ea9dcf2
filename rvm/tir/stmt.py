"""TIR statements: loops, blocks, stores, sequences, conditionals, allocations.

Constructors follow TVM's argument order; mutators copy statements with
``with_fields`` (statements derive nothing from their fields).
"""
import enum

from rvm.ir.expr import PrimExpr
from rvm.ir.node import Node
from rvm.runtime.data_type import DataType
from rvm.tir import op as _op
from rvm.tir.buffer import Buffer
from rvm.tir.expr import BufferLoad, IterVar, Range


class Stmt(Node):
    """Base of TIR statements."""


class ForKind(enum.IntEnum):
    """How a loop runs: in order, in parallel threads, as SIMD lanes, or unrolled."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4

    def __repr__(self):
        return f"ForKind.{self.name}"


# The loop kinds by their script names (T.serial, T.unroll, ...): the parser's and printer's table.
FOR_KIND_NAMES = {"serial": ForKind.SERIAL, "parallel": ForKind.PARALLEL,
                  "vectorized": ForKind.VECTORIZED, "unroll": ForKind.UNROLLED,
                  "thread_binding": ForKind.THREAD_BINDING}


def _for_kind(kind):
    if isinstance(kind, str):
        kind = "unroll" if kind == "unrolled" else kind  # the enum's name, as in TVM
        if kind not in FOR_KIND_NAMES:
            raise ValueError(f"unknown loop kind {kind!r}; expected one of {list(FOR_KIND_NAMES)}")
        return FOR_KIND_NAMES[kind]
    return ForKind(kind)


def _check_stmt(value, what):
    if not isinstance(value, Stmt):
        raise TypeError(f"{what} must be a Stmt, got {type(value).__name__} {value!r}")
    return value


class LetStmt(Stmt):
    """``body`` with ``var`` bound to ``value``."""

    _fields = ("var", "value", "body")
    _binding_fields = ("var",)

    def __init__(self, var, value, body, span=None):
        self.var = var
        self.value = _op.convert(value, var.dtype)
        self.body = _check_stmt(body, "LetStmt body")
        self.span = span


class AssertStmt(Stmt):
    """Checks ``condition`` (failing with ``message``), then runs ``body``."""

    _fields = ("condition", "message", "body")

    def __init__(self, condition, message, body, span=None):
        self.condition = _op.convert(condition)
        self.message = _op.convert(message)
        self.body = _check_stmt(body, "AssertStmt body")
        self.span = span


class For(Stmt):
    """``for loop_var in range(min, min + extent)`` of a given ForKind."""

    _fields = ("loop_var", "min", "extent", "kind", "body", "thread_binding", "annotations")
    _binding_fields = ("loop_var",)

    def __init__(self, loop_var, min, extent, kind, body, thread_binding=None,  # noqa: A002
                 annotations=None, span=None):
        self.loop_var = loop_var
        self.min = _op.convert(min, loop_var.dtype)
        self.extent = _op.convert(extent, loop_var.dtype)
        self.kind = _for_kind(kind)
        self.body = _check_stmt(body, "For body")
        self.thread_binding = thread_binding
        self.annotations = dict(annotations or {})
        self.span = span


class While(Stmt):
    """``while condition: body``."""

    _fields = ("condition", "body")

    def __init__(self, condition, body, span=None):
        self.condition = _op.convert(condition)
        self.body = _check_stmt(body, "While body")
        self.span = span


class BufferStore(Stmt):
    """``buffer[indices] = value``."""

    _fields = ("buffer", "value", "indices")

    def __init__(self, buffer, value, indices, span=None):
        if not isinstance(buffer, Buffer):
            raise TypeError(f"BufferStore expects a Buffer, got {type(buffer).__name__}")
        indices = tuple(_op.convert(i) for i in indices)
        if len(indices) != len(buffer.shape):
            raise ValueError(f"buffer {buffer.name!r} has {len(buffer.shape)} dimensions, "
                             f"got {len(indices)} indices")
        value = _op.convert(value, buffer.dtype)
        if value.dtype.element_of != buffer.dtype.element_of:
            raise TypeError(f"cannot store a {value.dtype} value into buffer {buffer.name!r} "
                            f"of dtype {buffer.dtype}")
        self.buffer = buffer
        self.value = value
        self.indices = indices
        self.span = span


def vstore(buffer, indices, value):
    """``buffer.vstore(indices, value)``: a BufferStore writing ``value`` at ``indices``."""
    return BufferStore(buffer, _op.convert(value, buffer.dtype), buffer._indices(tuple(indices)))


class Allocate(Stmt):
    """Allocates ``buffer_var`` (extents of ``dtype``) for the duration of ``body``."""

    _fields = ("buffer_var", "dtype", "extents", "condition", "body", "annotations")
    _binding_fields = ("buffer_var",)

    def __init__(self, buffer_var, dtype, extents, condition, body, annotations=None, span=None):
        self.buffer_var = buffer_var
        self.dtype = DataType(dtype)
        self.extents = tuple(_op.convert(e) for e in extents)
        self.condition = _op.convert(True if condition is None else condition)
        self.body = _check_stmt(body, "Allocate body")
        self.annotations = dict(annotations or {})
        self.span = span


class DeclBuffer(Stmt):
    """Declares ``buffer`` (over existing memory) for ``body``."""

    _fields = ("buffer", "body")
    _binding_fields = ("buffer",)

    def __init__(self, buffer, body, span=None):
        self.buffer = buffer
        self.body = _check_stmt(body, "DeclBuffer body")
        self.span = span


class SeqStmt(Stmt):
    """Statements run in order."""

    _fields = ("seq",)

    def __init__(self, seq, span=None):
        self.seq = tuple(_check_stmt(s, "SeqStmt element") for s in seq)
        self.span = span

    def __len__(self):
        return len(self.seq)

    def __getitem__(self, i):
        return self.seq[i]


def stmt_seq(*stmts):
    """One statement running ``stmts`` in order, flattening nested sequences.

    A single statement is returned as it is; expressions become Evaluate.
    """
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif isinstance(s, PrimExpr):
            flat.append(Evaluate(s))
        elif isinstance(s, (list, tuple)):
            inner = stmt_seq(*s)
            flat.extend(inner.seq if isinstance(inner, SeqStmt) else [inner])
        else:
            flat.append(_check_stmt(s, "stmt_seq element"))
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)


class IfThenElse(Stmt):
    """``if condition: then_case else: else_case`` (else_case may be None)."""

    _fields = ("condition", "then_case", "else_case")

    def __init__(self, condition, then_case, else_case=None, span=None):
        self.condition = _op.convert(condition)
        self.then_case = _check_stmt(then_case, "IfThenElse then_case")
        self.else_case = None if else_case is None else _check_stmt(else_case, "else_case")
        self.span = span


class Evaluate(Stmt):
    """Evaluates an expression for its side effect (a call)."""

    _fields = ("value",)

    def __init__(self, value, span=None):
        self.value = _op.convert(value)
        self.span = span


class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension."""

    _fields = ("buffer", "region")

    def __init__(self, buffer, region, span=None):
        region = tuple(region)
        if len(region) != len(buffer.shape):
            raise ValueError(f"buffer {buffer.name!r} has {len(buffer.shape)} dimensions, "
                             f"got a region of {len(region)}")
        self.buffer = buffer
        self.region = region
        self.span = span

    @classmethod
    def full_region(cls, buffer):
        """The region covering the whole buffer."""
        return cls(buffer, [Range.from_min_extent(_op.const(0, d.dtype), d) for d in buffer.shape])

    @classmethod
    def from_point(cls, buffer, indices):
        """The single-element region at ``indices``."""
        return cls(buffer, [Range.from_min_extent(i, _op.const(1, _op.convert(i).dtype))
                            for i in indices])


class MatchBufferRegion(Node):
    """Binds ``buffer`` to a region of another buffer inside a block."""

    _fields = ("buffer", "source")
    _binding_fields = ("buffer",)

    def __init__(self, buffer, source, span=None):
        self.buffer = buffer
        self.source = source
        self.span = span


class Block(Stmt):
    """A TensorIR block: iteration variables (spatial "S" / reduction "R"), accessed regions,
    an optional reduction ``init``, locally allocated buffers and a body.
    """

    _fields = ("iter_vars", "alloc_buffers", "match_buffers", "reads", "writes", "name_hint",
               "init", "body", "annotations")
    _binding_fields = ("iter_vars", "alloc_buffers", "match_buffers")
    _equal_ignored = ("name_hint",)  # as in TVM: blocks equal up to their names

    def __init__(self, iter_vars, reads, writes, name_hint, body, init=None, alloc_buffers=(),
                 match_buffers=(), annotations=None, span=None):
        for iv in iter_vars:
            if not isinstance(iv, IterVar):
                raise TypeError(f"block {name_hint!r}: iter_vars must be IterVars, got {iv!r}")
        self.iter_vars = tuple(iter_vars)
        self.alloc_buffers = tuple(alloc_buffers)
        self.match_buffers = tuple(match_buffers)
        self.reads = tuple(_as_region(r, name_hint) for r in reads)
        self.writes = tuple(_as_region(w, name_hint) for w in writes)
        self.name_hint = name_hint
        self.init = None if init is None else _check_stmt(init, "Block init")
        self.body = _check_stmt(body, "Block body")
        self.annotations = dict(annotations or {})
        self.span = span


def _as_region(value, block_name):
    if isinstance(value, BufferRegion):
        return value
    if isinstance(value, BufferLoad):
        return BufferRegion.from_point(value.buffer, value.indices)
    if isinstance(value, Buffer):
        return BufferRegion.full_region(value)
    raise TypeError(f"block {block_name!r}: reads/writes must be BufferRegions, buffer loads or "
                    f"buffers, got {type(value).__name__} {value!r}")


class BlockRealize(Stmt):
    """Runs ``block`` with its iteration variables bound to ``iter_values`` when ``predicate``."""

    _fields = ("iter_values", "predicate", "block")

    def __init__(self, iter_values, predicate, block, span=None):
        if not isinstance(block, Block):
            raise TypeError(f"BlockRealize expects a Block, got {type(block).__name__}")
        iter_values = tuple(_op.convert(v) for v in iter_values)
        if len(iter_values) != len(block.iter_vars):
            raise ValueError(f"block {block.name_hint!r} has {len(block.iter_vars)} iter_vars, "
                             f"got {len(iter_values)} values")
        self.iter_values = iter_values
        self.predicate = _op.convert(True if predicate is None else predicate)
        self.block = block
        self.span = span

