"""Schedule: transforms the loop nests of TensorIR functions, recording a replayable trace.

>>> # sch = rvm.tir.Schedule(Module)
>>> # block_c = sch.get_block("C", "main")
>>> # i, j, k = sch.get_loops(block_c)
>>> # j0, j1 = sch.split(j, factors=[None, 4])
>>> # print(sch.mod.script()); print(sch.trace)

Primitives take and return handles (BlockRV, LoopRV, ExprRV) and check that
the transformation keeps what the function computes; a use that would not
raises ScheduleError naming the rule. The transformations themselves live in
``rvm.tir.schedule.primitive`` (one concept per module); this class holds the
state, the handles, the random state and the trace.
"""
import random

from rvm.ir.expr import PrimExpr
from rvm.ir.module import IRModule
from rvm.tir.analysis.verify import verify_well_formed
from rvm.tir.arith import simplify
from rvm.tir.expr import IntImm
from rvm.tir.function import PrimFunc
from rvm.tir.schedule import analysis as _an
from rvm.tir.schedule import sampling as _sampling
from rvm.tir.schedule.error import ScheduleError
from rvm.tir.schedule.instruction import Instruction
from rvm.tir.schedule.primitive.annotation import Annotations
from rvm.tir.schedule.primitive.cache import CacheReadWrite
from rvm.tir.schedule.primitive.compute_at import ComputeLocation
from rvm.tir.schedule.primitive.compute_inline import ComputeInline
from rvm.tir.schedule.primitive.for_kind import LoopKinds
from rvm.tir.schedule.primitive.layout import LayoutTransformation
from rvm.tir.schedule.primitive.loop_transformation import LoopTransformations
from rvm.tir.schedule.primitive.pad_columns import ColumnPadding
from rvm.tir.schedule.primitive.partition_rows import RowPartition
from rvm.tir.schedule.primitive.reduction import Reduction
from rvm.tir.schedule.rv import BlockRV, ExprRV, LoopRV, _Mark
from rvm.tir.schedule.state import ScheduleState, StmtSRef
from rvm.tir.schedule.trace import Trace
from rvm.tir.stmt import Block, For
from rvm.tir.stmt_functor import substitute

_DEBUG_MASKS = ("none", "all")
_RENDER_LEVELS = ("detail", "fast", "none")


class Schedule(LoopTransformations, LoopKinds, Annotations, Reduction, ComputeLocation,
               ComputeInline, CacheReadWrite, LayoutTransformation, RowPartition,
               ColumnPadding):
    """A schedule of ``mod`` (an IRModule or a PrimFunc, which becomes the function "main").

    ``seed`` seeds the sampling primitives (None: a random seed). With
    ``debug_mask="all"`` every primitive also checks the result is well formed.
    ``error_render_level`` is "detail" (errors show the facts found), "fast" or "none".
    """

    def __init__(self, mod, seed=None, debug_mask="none", error_render_level="detail",
                 enable_check=True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise TypeError(f"Schedule expects an IRModule or a PrimFunc, got "
                            f"{type(mod).__name__}")
        if debug_mask not in _DEBUG_MASKS and not isinstance(debug_mask, int):
            raise ValueError(f"debug_mask must be one of {_DEBUG_MASKS} or an int, "
                             f"got {debug_mask!r}")
        if error_render_level not in _RENDER_LEVELS:
            raise ValueError(f"error_render_level must be one of {_RENDER_LEVELS}, "
                             f"got {error_render_level!r}")
        self.state = ScheduleState(mod)
        self.debug = debug_mask == "all" or (isinstance(debug_mask, int) and debug_mask != 0)
        self.error_render_level = error_render_level
        self.enable_check = enable_check
        self._rng = random.Random()
        self.seed(seed)
        self._symbols = {}
        self._insts = []
        self._decisions = {}
        prims = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
        self.func_working_on = prims[0] if len(prims) == 1 else \
            ("main" if "main" in prims else None)

    # -- the module, the trace, the random state -----------------------------------------
    @property
    def mod(self):
        """The scheduled IRModule (a snapshot: later primitives do not change it)."""
        return self.state.mod.copy()

    @property
    def trace(self):
        """The Trace of the primitives run so far."""
        return Trace(self._insts, self._decisions)

    def work_on(self, func_name):
        """Makes ``func_name`` the function ``get_block`` searches by default."""
        if func_name not in self.state.roots:
            raise ValueError(f"work_on: the module has no PrimFunc named {func_name!r}; "
                             f"it has {sorted(self.state.roots)}")
        self.func_working_on = func_name

    def seed(self, seed):
        """Reseeds the random state (None or -1: a random seed)."""
        if seed is None or seed == -1:
            seed = random.SystemRandom().randrange(1, 2 ** 31)
        self._rng.seed(int(seed))

    def fork_seed(self):
        """A new seed drawn from the random state (for another schedule)."""
        return self._rng.randrange(1, 2 ** 31)

    def copy(self):
        """An independent copy: same module and trace, the same handles (each referring to
        the copy's blocks and loops), and a random state forked from this one."""
        new = Schedule.__new__(Schedule)
        new.state = ScheduleState(self.state.mod)
        new.debug = self.debug
        new.error_render_level = self.error_render_level
        new.enable_check = self.enable_check
        new._rng = random.Random(self.fork_seed())
        new._insts = list(self._insts)
        new._decisions = dict(self._decisions)
        new.func_working_on = self.func_working_on
        new._symbols = {}
        for rv, value in self._symbols.items():
            if isinstance(value, StmtSRef):
                value = new.state.sref_of_stmt(value.stmt) if value.stmt is not None \
                    else StmtSRef(None, None, -1, None)
            new._symbols[rv] = value
        return new

    def show(self, *args, **kwargs):
        """Prints the scheduled module."""
        self.state.mod.show(*args, **kwargs)

    # -- handles -------------------------------------------------------------------------
    def get(self, rand_var_or_sref):
        """What a handle refers to now: a Block, a For, or the integer a sampled variable
        took (an expression of sampled variables is evaluated)."""
        x = rand_var_or_sref
        if isinstance(x, StmtSRef):
            return x.stmt
        if isinstance(x, (BlockRV, LoopRV)):
            return self._sref(x, "get").stmt
        return self._value(x)

    def get_sref(self, rand_var_or_stmt):
        """The StmtSRef of a BlockRV, LoopRV, Block or For."""
        x = rand_var_or_stmt
        if isinstance(x, (BlockRV, LoopRV)):
            return self._sref(x, "get_sref")
        if isinstance(x, (Block, For)):
            sref = self.state.sref_of_stmt(x)
            if sref is None:
                raise ValueError(f"get_sref: {type(x).__name__} is not in the scheduled module")
            return sref
        raise TypeError(f"get_sref expects a BlockRV, LoopRV, Block or For, got "
                        f"{type(x).__name__}")

    def remove_rv(self, rand_var):
        """Forgets a handle."""
        if rand_var not in self._symbols:
            raise ValueError(f"remove_rv: {rand_var!r} is not a handle of this schedule")
        del self._symbols[rand_var]

    def _sref(self, rv, primitive):
        if isinstance(rv, _Mark):
            raise ScheduleError(primitive, f"the {rv.name} compute-location mark is not a loop")
        if rv not in self._symbols:
            raise ValueError(f"{primitive}: {rv!r} is not a handle of this schedule")
        sref = self._symbols[rv]
        if sref.stmt is None:
            what = "block" if isinstance(rv, BlockRV) else "loop"
            raise ScheduleError(primitive, f"the {what} this handle referred to no longer "
                                "exists (a previous primitive removed or replaced it)")
        return sref

    def _block(self, rv, primitive):
        if not isinstance(rv, BlockRV):
            raise TypeError(f"{primitive} expects a BlockRV, got {type(rv).__name__}")
        return self._sref(rv, primitive)

    def _loop(self, rv, primitive):
        if not isinstance(rv, LoopRV):
            raise TypeError(f"{primitive} expects a LoopRV, got {type(rv).__name__}")
        return self._sref(rv, primitive)

    def _block_or_loop(self, rv, primitive):
        if not isinstance(rv, (BlockRV, LoopRV)):
            raise TypeError(f"{primitive} expects a BlockRV or LoopRV, got {type(rv).__name__}")
        return self._sref(rv, primitive)

    def _value(self, x):
        """The integer of an int, IntImm, ExprRV or expression of ExprRVs."""
        if isinstance(x, bool):
            raise TypeError(f"expected an integer, got {x!r}")
        if isinstance(x, int):
            return x
        if isinstance(x, ExprRV):
            if x not in self._symbols:
                raise ValueError(f"{x!r} is not a sampled variable of this schedule")
            return self._symbols[x]
        if isinstance(x, IntImm):
            return x.value
        if isinstance(x, PrimExpr):
            value = simplify(substitute(x, lambda v: self._symbols.get(v)
                                        if isinstance(v, ExprRV) else None))
            if isinstance(value, IntImm):
                return value.value
            raise ValueError(f"cannot evaluate {x!r} to an integer")
        raise TypeError(f"expected an integer or a sampled variable, got {type(x).__name__}")

    def _new_rv(self, cls, sref):
        rv = cls()
        self._symbols[rv] = sref
        return rv

    def _new_expr_rv(self, value):
        rv = ExprRV()
        self._symbols[rv] = int(value)
        return rv

    def _record(self, kind, inputs, attrs, outputs, decision=None):
        inst = Instruction(kind, inputs, attrs, outputs if isinstance(outputs, list)
                           else ([] if outputs is None else [outputs]))
        self._insts.append(inst)
        if decision is not None:
            self._decisions[inst] = decision
        return outputs

    def _error(self, primitive, rule, sref=None, detail=""):
        where = _an.describe(sref) if sref is not None else ""
        return ScheduleError(primitive, rule, where, detail, self.error_render_level)

    def _replace(self, sref, table, block_reuse=None, buffer_map=None):
        """Applies a statement replacement in the function of ``sref``."""
        func = self.state.replace(sref.func_name, table, block_reuse, buffer_map)
        if self.debug:
            verify_well_formed(func)
        return func

    # -- getting blocks and loops --------------------------------------------------------
    def get_block(self, name, func_name=None):
        """The block named ``name`` in function ``func_name`` (the function worked on by
        default); ScheduleError when there is none or more than one."""
        func_name = func_name or self.func_working_on
        if func_name is None:
            raise ValueError(f"get_block({name!r}): the module has several functions; pass "
                             f"func_name (one of {sorted(self.state.roots)})")
        if func_name not in self.state.roots:
            raise ValueError(f"get_block: the module has no PrimFunc named {func_name!r}; "
                             f"it has {sorted(self.state.roots)}")
        found = [s for s in self.state.srefs_of(func_name)
                 if s.is_block and s.stmt.name_hint == name]
        if len(found) != 1:
            names = sorted({s.stmt.name_hint for s in self.state.srefs_of(func_name)
                            if s.is_block and s.parent is not None})
            rule = "no block has this name" if not found else \
                f"{len(found)} blocks have this name; expected exactly one"
            raise ScheduleError("get_block", rule, f'block "{name}" of function {func_name}',
                                f"blocks: {', '.join(names) or 'none'}")
        rv = self._new_rv(BlockRV, found[0])
        return self._record("GetBlock", [], [name, func_name], rv)

    def get_loops(self, block):
        """The loops around ``block`` (inside its scope), outermost first."""
        sref = self._block(block, "get_loops")
        rvs = [self._new_rv(LoopRV, s) for s in _an.loops_of(sref)]
        return self._record("GetLoops", [block], [], rvs)

    def get_child_blocks(self, block_or_loop):
        """The blocks directly under a block or loop, in execution order."""
        sref = self._block_or_loop(block_or_loop, "get_child_blocks")
        rvs = [self._new_rv(BlockRV, s) for s in _an.child_blocks(self.state, sref)]
        return self._record("GetChildBlocks", [block_or_loop], [], rvs)

    def get_producers(self, block):
        """The blocks of the same scope whose results ``block`` reads."""
        sref = self._block(block, "get_producers")
        scope = _an.BlockScope(self.state, _an.scope_of(sref))
        rvs = [self._new_rv(BlockRV, s) for s in scope.producers(sref)]
        return self._record("GetProducers", [block], [], rvs)

    def get_consumers(self, block):
        """The blocks of the same scope that read results of ``block``."""
        sref = self._block(block, "get_consumers")
        scope = _an.BlockScope(self.state, _an.scope_of(sref))
        rvs = [self._new_rv(BlockRV, s) for s in scope.consumers(sref)]
        return self._record("GetConsumers", [block], [], rvs)

    # -- sampling ------------------------------------------------------------------------
    def sample_perfect_tile(self, loop, n, max_innermost_factor=16, decision=None):
        """``n`` sampled factors whose product is the loop's (constant) extent, the innermost
        at most ``max_innermost_factor``; ``decision`` fixes them instead."""
        sref = self._loop(loop, "sample_perfect_tile")
        extent = _an.const_extent(sref.stmt)
        if extent is None:
            raise self._error("sample_perfect_tile", "the loop extent must be a constant",
                              sref, f"extent {sref.stmt.extent!r}")
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"sample_perfect_tile: n must be a positive int, got {n!r}")
        if decision is None:
            decision = _sampling.sample_perfect_tile(self._rng, extent, n, max_innermost_factor)
        else:
            decision = [int(f) for f in decision] if isinstance(decision, (list, tuple)) \
                else decision
            reason = _sampling.check_perfect_tile(decision, extent, n)
            if reason:
                raise self._error("sample_perfect_tile", "the decision must be a perfect "
                                  "tiling of the loop extent", sref, reason)
        rvs = [self._new_expr_rv(f) for f in decision]
        return self._record("SamplePerfectTile", [loop], [n, max_innermost_factor], rvs,
                            list(decision))

    def sample_categorical(self, candidates, probs, decision=None):
        """One of ``candidates`` (ints) drawn with probabilities ``probs``; ``decision``
        (an index into candidates) fixes it."""
        candidates, probs = list(candidates), [float(p) for p in probs]
        if not candidates or len(candidates) != len(probs):
            raise ValueError(f"sample_categorical: expected as many probabilities as "
                             f"candidates (at least one), got {len(candidates)} candidates "
                             f"and {len(probs)} probabilities")
        if any(p < 0 for p in probs) or sum(probs) <= 0:
            raise ValueError(f"sample_categorical: probabilities must be non-negative and not "
                             f"all zero, got {probs}")
        if decision is None:
            decision = _sampling.sample_categorical(self._rng, probs)
        elif not isinstance(decision, int) or not 0 <= decision < len(candidates):
            raise ScheduleError("sample_categorical", "the decision must index the candidates",
                                detail=f"decision {decision!r}, {len(candidates)} candidates")
        rv = self._new_expr_rv(self._value(candidates[decision]))
        return self._record("SampleCategorical", [], [candidates, probs], rv, decision)

    def enter_postproc(self):
        """Marks the start of postprocessing in the trace (``remove_postproc`` cuts there)."""
        self._record("EnterPostproc", [], [], None)
