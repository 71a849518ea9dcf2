"""Bytecode arguments of Relax expressions, for the VM codegen.

Variables map to the Arg of their value (a register, or the leaf a variable
aliases); leaves become immediates (small integers) or constant-pool entries
(tensors, strings, dtypes, constant shapes, floats), each pooled once;
function references become function arguments; a tuple argument is built
into a register first.
"""
from rvm.bytecode.contract import IMM_MAX, IMM_MIN
from rvm.ir.expr import GlobalVar
from rvm.relax.binding import SeqExpr
from rvm.relax.expr import (
    Constant, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple, Var,
)
from rvm.runtime.container import ShapeTuple
from rvm.tir.expr import FloatImm, IntImm


def alias_names(func):
    """{var: name of the variable it becomes} over ``func``'s bindings: ``lv0 = alloc``
    names ``alloc`` "lv0"; ``t = (alloc, alloc1)`` names both "t" unless aliased."""
    names = {}
    stack = [func.body]
    while stack:
        node = stack.pop()
        if isinstance(node, SeqExpr):
            for block in node.blocks:
                for binding in block.bindings:
                    value = binding.value
                    if isinstance(value, Var):
                        names[value] = binding.var.name_hint
                    elif isinstance(value, Tuple):  # several outputs gathered: (alloc, alloc1)
                        for field in value.fields:
                            if isinstance(field, Var):
                                names.setdefault(field, binding.var.name_hint)
                    elif isinstance(value, If):
                        stack.extend((value.true_branch, value.false_branch))
    return names


class ArgConverter:
    """Turns Relax argument expressions into bytecode Args for one function.

    ``callee_arg(gv)`` gives the function Arg of a GlobalVar; ``new_reg()`` a
    fresh register (for tuples built on the fly); ``where`` names the
    function in errors.
    """

    def __init__(self, ib, callee_arg, new_reg, where):
        self.ib = ib
        self.callee_arg = callee_arg
        self.new_reg = new_reg
        self.where = where
        self.env = {}
        self._const_args = {}  # id(Constant) -> (Constant, Arg): each tensor encoded once

    def bind(self, var, arg):
        """Records that ``var`` evaluates to ``arg``."""
        self.env[var] = arg

    def args(self, exprs):
        """The Args of a sequence of expressions."""
        return [self.arg(e) for e in exprs]

    def arg(self, expr):
        """The Arg of one argument expression."""
        ib = self.ib
        if isinstance(expr, Var):
            arg = self.env.get(expr)
            if arg is None:
                raise ValueError(f"{self.where}: variable '{expr.name_hint}' is used before "
                                 f"it is defined")
            return arg
        if isinstance(expr, Constant):
            cached = self._const_args.get(id(expr))
            if cached is None or cached[0] is not expr:
                cached = (expr, ib.c(ib.convert_constant(expr.data)))
                self._const_args[id(expr)] = cached
            return cached[1]
        if isinstance(expr, PrimValue):
            return self._prim(expr.value)
        if isinstance(expr, StringImm):
            return ib.c(ib.convert_constant(expr.value))
        if isinstance(expr, DataTypeImm):
            return ib.c(ib.convert_constant(expr.value))
        if isinstance(expr, ShapeExpr):
            return ib.c(ib.convert_constant(ShapeTuple(self._dims(expr))))
        if isinstance(expr, GlobalVar):
            return self.callee_arg(expr)
        if isinstance(expr, ExternFunc):
            return ib.f(expr.global_symbol)
        if isinstance(expr, Tuple):
            fields = self.args(expr.fields)
            dst = self.new_reg()
            ib.emit_call("vm.builtin.make_tuple", fields, dst=dst)
            return dst
        raise ValueError(f"{self.where}: a {type(expr).__name__} cannot be a call argument in "
                         f"lowered Relax; expected a variable, a constant, a PrimValue, a "
                         f"StringImm, a DataTypeImm, a constant shape, a tuple or a function")

    def size_arg(self, expr):
        """The size operand of alloc_storage: an immediate for a constant one-dimensional
        shape (the byte count), else the shape's Arg."""
        if isinstance(expr, ShapeExpr) and len(expr.values) == 1:
            dims = self._dims(expr)
            if IMM_MIN <= dims[0] <= IMM_MAX:
                return self.ib.imm(dims[0])
        return self.arg(expr)

    def _dims(self, shape):
        dims = []
        for i, dim in enumerate(shape.values):
            if not isinstance(dim, IntImm):
                raise ValueError(f"{self.where}: shape dimension {i} is symbolic ({dim!r}); "
                                 f"expected constant shapes in lowered Relax (VMShapeLower "
                                 f"computes symbolic ones with make_shape)")
            dims.append(dim.value)
        return dims

    def _prim(self, value):
        ib = self.ib
        if isinstance(value, IntImm):
            if value.dtype == "bool":
                return ib.c(ib.convert_constant(bool(value.value)))
            if IMM_MIN <= value.value <= IMM_MAX:
                return ib.imm(value.value)
            return ib.c(ib.convert_constant(int(value.value)))
        if isinstance(value, FloatImm):
            return ib.c(ib.convert_constant(float(value.value)))
        raise ValueError(f"{self.where}: PrimValue {value!r} is symbolic; expected a constant "
                         f"(VMShapeLower computes symbolic values)")
