"""Bindings and blocks: the statements of a Relax function body.

A function body is a ``SeqExpr``: a list of binding blocks followed by a
result expression. A ``DataflowBlock`` is a side-effect-free region whose
intermediate values are ``DataflowVar``s.
"""
from rvm.ir.expr import RelaxExpr
from rvm.ir.node import Node
from rvm.relax.expr import Var
from rvm.relax.struct_info import StructInfo


def _check_var(var, who):
    if not isinstance(var, Var):
        raise TypeError(f"{who}: expected a relax Var, got {type(var).__name__}")
    return var


def _check_value(value, who):
    if not isinstance(value, RelaxExpr):
        raise TypeError(f"{who}: expected a Relax expression, got {type(value).__name__}")
    return value


class Binding(Node):
    """Base of bindings: each defines ``var``."""

    _binding_fields = ("var",)


class VarBinding(Binding):
    """``var = value``.

    >>> from rvm.relax.expr import PrimValue
    >>> VarBinding(Var("x"), PrimValue(1)).var.name_hint
    'x'
    """

    _fields = ("var", "value")

    def __init__(self, var, value, span=None):
        self.var = _check_var(var, "VarBinding")
        self.value = _check_value(value, f"VarBinding '{var.name_hint}'")
        self.span = span


class MatchCast(Binding):
    """``var = match_cast(value, struct_info)``: checks ``value`` against ``struct_info`` at run
    time and binds the symbolic variables that first appear in it."""

    _fields = ("var", "value", "struct_info")

    def __init__(self, var, value, struct_info, span=None):
        self.var = _check_var(var, "MatchCast")
        self.value = _check_value(value, f"MatchCast '{var.name_hint}'")
        if not isinstance(struct_info, StructInfo):
            raise TypeError(f"MatchCast '{var.name_hint}': struct_info must be a StructInfo, got "
                            f"{type(struct_info).__name__}")
        self.struct_info = struct_info
        self.span = span


class BindingBlock(Node):
    """A sequence of bindings, run in order."""

    _fields = ("bindings",)

    def __init__(self, bindings, span=None):
        bindings = tuple(bindings)
        for i, binding in enumerate(bindings):
            if not isinstance(binding, Binding):
                raise TypeError(f"{type(self).__name__}: binding {i} must be a VarBinding or "
                                f"MatchCast, got {type(binding).__name__}")
        self.bindings = bindings
        self.span = span


class DataflowBlock(BindingBlock):
    """A block of pure bindings; its ``DataflowVar``s are invisible after the block."""


class SeqExpr(RelaxExpr):
    """Runs ``blocks`` then evaluates to ``body``.

    >>> from rvm.relax.expr import PrimValue
    >>> SeqExpr([], PrimValue(0)).struct_info.dtype
    DataType('int64')
    """

    _fields = ("blocks", "body")

    def __init__(self, blocks, body, span=None):
        blocks = tuple(blocks)
        for i, block in enumerate(blocks):
            if not isinstance(block, BindingBlock):
                raise TypeError(f"SeqExpr: block {i} must be a BindingBlock, got "
                                f"{type(block).__name__}")
        self.blocks = blocks
        self.body = _check_value(body, "SeqExpr body")
        self.span = span
        if body.struct_info_ is not None:
            object.__setattr__(self, "struct_info_", body.struct_info_)
