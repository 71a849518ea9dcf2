"""rvm.tir: TensorIR, the loop-nest kernel IR.

This package is a facade; the definitions live in its modules. It attaches the methods
whose results are defined above their node's module (see the end of this file).
"""
from rvm.tir.expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BinaryOpExpr, Broadcast, BufferLoad, Call, Cast, CmpExpr,
    Div, FloatImm, FloorDiv, FloorMod, IntImm, IterVar, Let, Max, Min, Mod, Mul, Not, Or,
    PrimExprWithOp, Ramp, Range, Reduce, Select, SizeVar, StringImm, Sub, Var,
)
from rvm.tir.op import (
    abs, acos, acosh, all, any, asin, asinh, atan, atanh, call_extern, call_intrin, call_packed,
    cast, ceil, const, cos, cosh, div, erf, exp, exp2, fabs, floor, floordiv, floormod,
    if_then_else, indexdiv, indexmod, isfinite, isinf, isnan, log, log1p, log2, log10, max,
    max_value, min, min_value, pow, power, round, rsqrt, sigmoid, sin, sinh, sqrt, tan, tanh,
    trunc, truncdiv, truncmod, vscale,
)  # op attaches PrimExprWithOp's Python operators
from rvm.tir.expr_printer import expr_text
from rvm.tir.buffer import Buffer, decl_buffer
from rvm.tir.layout import Layout, layout
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import (
    Allocate, AssertStmt, Block, BlockRealize, BufferRegion, BufferStore, DeclBuffer, Evaluate,
    For, ForKind, IfThenElse, LetStmt, MatchBufferRegion, SeqStmt, Stmt, While, stmt_seq,
)
from rvm.tir.stmt_functor import (
    ExprMutator, ExprVisitor, StmtExprMutator, StmtExprVisitor, StmtMutator, StmtVisitor,
    post_order_visit, substitute,
)
from rvm.tir.arith import Analyzer, simplify
from rvm.tir.index_map import IndexMap
from rvm.tir import analysis
from rvm.tir.schedule import (
    BlockRV, ExprRV, Instruction, InstructionKind, LoopRV, Schedule, ScheduleError, Trace,
)

from rvm.tir import transform  # the passes, after the nodes they read
from rvm.tir.analysis.region import buffer_subscript
from rvm.tir.specialize import specialize
from rvm.tir.stmt import vstore

# Methods whose results live above the node's own module, attached where all are imported.
PrimExprWithOp.__repr__ = expr_text  # expressions print in script syntax
Buffer.__getitem__ = buffer_subscript  # a BufferLoad, or with slices a BufferRegion
Buffer.vstore = vstore
PrimFunc.specialize = specialize
