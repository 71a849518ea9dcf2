"""Normalization: filling in struct info and flattening nested calls (A-normal form).

``Normalizer`` is the half of the BlockBuilder that turns an arbitrary
Relax expression into normal form: every expression gets its struct info
(operators infer it, calls of functions derive it from the callee), and a
non-leaf argument of a call or tuple (``add(mul(x, y), z)``) is bound to a
fresh variable in the current block first.
"""
import contextlib

from rvm.ir.expr import GlobalVar, RelaxExpr
from rvm.relax.analysis.struct_info_analysis import (
    derive_call_ret_struct_info,
    is_scalar_bool,
    struct_info_lca,
)
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call,
    Constant,
    DataTypeImm,
    ExternFunc,
    If,
    PrimValue,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
)
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import FuncStructInfo, ObjectStructInfo, TupleStructInfo
from rvm.support.errors import StructInfoError, StructInfoTypeError

_LEAVES = (Var, Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm, ExternFunc, GlobalVar, Op)


def is_leaf(expr):
    """Whether ``expr`` may appear as an argument in normal form (no nested computation)."""
    if isinstance(expr, Tuple):
        return all(is_leaf(f) for f in expr.fields)
    return isinstance(expr, _LEAVES)


def _set_sinfo(expr, sinfo):
    object.__setattr__(expr, "struct_info_", sinfo)


class _BlockFrame:
    """The bindings being collected for one block."""

    def __init__(self, is_dataflow):
        self.is_dataflow = is_dataflow
        self.bindings = []


class Normalizer:
    """Struct info inference and A-normal form; the base of BlockBuilder.

    ``mod`` is the module whose functions GlobalVars refer to. With
    ``check_global_vars`` (the default), a call_tir or call of a GlobalVar
    missing from the module is an error naming it.
    """

    def __init__(self, mod, check_global_vars=True):
        self._mod = mod
        self._check_gv = check_global_vars
        self._block = None
        self._name_counts = {}
        self._binding_values = {}

    # -- names and variables -------------------------------------------------------------
    def get_unique_name(self, name_hint):
        """``name_hint`` the first time, then ``name_hint1``, ``name_hint2``...

        >>> from rvm.ir.module import IRModule
        >>> n = Normalizer(IRModule())
        >>> n.get_unique_name("lv"), n.get_unique_name("lv")
        ('lv', 'lv1')
        """
        count = self._name_counts.get(name_hint)
        if count is None:
            self._name_counts[name_hint] = 1
            return name_hint
        while f"{name_hint}{count}" in self._name_counts:
            count += 1
        self._name_counts[name_hint] = count + 1
        unique = f"{name_hint}{count}"
        self._name_counts[unique] = 1
        return unique

    def _new_var(self, name_hint, sinfo, dataflow):
        from rvm.relax.expr import DataflowVar

        default = "lv" if dataflow else "gv"
        name = self.get_unique_name(name_hint or default)
        return DataflowVar(name, sinfo) if dataflow else Var(name, sinfo)

    def current_block_is_dataflow(self):
        """Whether bindings currently go into a dataflow block."""
        return self._block is not None and self._block.is_dataflow

    def lookup_binding(self, var):
        """The value bound to ``var`` by this builder, or None."""
        return self._binding_values.get(id(var), (None, None))[1]

    @contextlib.contextmanager
    def binding_scope(self, is_dataflow=False):
        """Collects the bindings emitted inside the ``with`` into a fresh frame (yielded; its
        ``bindings`` list is complete after the block), then restores the enclosing one."""
        outer, self._block = self._block, _BlockFrame(is_dataflow)
        try:
            yield self._block
        finally:
            self._block = outer

    def _append(self, binding):
        self._block.bindings.append(binding)
        self._binding_values[id(binding.var)] = (binding.var, binding.value)
        return binding.var

    # -- module lookups --------------------------------------------------------------------
    def check_global_var(self, gvar, who):
        """Raises ValueError naming ``gvar`` when checking is on and the module lacks it."""
        if self._check_gv and gvar.name_hint not in self._mod:
            names = [gv.name_hint for gv in self._mod.get_global_vars()]
            raise ValueError(f"{who}: function '{gvar.name_hint}' is not in the module; "
                             f"expected one of {names}")

    def _callee_struct_info(self, callee):
        if isinstance(callee, GlobalVar):
            if callee.name_hint in self._mod:
                func = self._mod[callee.name_hint]
                if isinstance(func, Function):
                    return func.struct_info_
                raise ValueError(f"call of '{callee.name_hint}': it is a "
                                 f"{type(func).__name__}, call it through call_tir")
            self.check_global_var(callee, "call")
            return callee.struct_info_ or FuncStructInfo.opaque_func()
        return callee.struct_info_

    # -- normalization ---------------------------------------------------------------------
    def normalize(self, expr):
        """``expr`` in normal form with struct info; nested calls are emitted into the current
        block (when there is one).

        Python lists and tuples of expressions become Tuples.
        """
        if isinstance(expr, (list, tuple)):
            expr = Tuple([self.normalize_argument(e) for e in expr])
        if not isinstance(expr, RelaxExpr):
            raise TypeError(f"normalize: expected a Relax expression, got {type(expr).__name__}")
        method = getattr(self, "_normalize_" + type(expr).__name__.lower(), None)
        if method is None:
            for base in type(expr).__mro__[1:]:
                method = getattr(self, "_normalize_" + base.__name__.lower(), None)
                if method is not None:
                    break
        if method is None:
            if expr.struct_info_ is None:
                raise TypeError(f"normalize: cannot deduce struct info of {type(expr).__name__}")
            return expr
        return method(expr)

    def normalize_argument(self, expr):
        """``expr`` normalized and, if not a leaf, bound to a fresh variable first."""
        expr = self.normalize(expr)
        if is_leaf(expr) or self._block is None:
            return expr
        var = self._new_var("", expr.struct_info_, self._block.is_dataflow)
        return self._append(VarBinding(var, expr))

    def _normalize_var(self, var):
        if var.struct_info_ is None:
            raise ValueError(f"variable '{var.name_hint}' has no struct info; expected it to be "
                             "annotated (relax.Var(name, struct_info)) or bound by the builder")
        return var

    def _normalize_globalvar(self, gvar):
        return gvar

    def _normalize_op(self, op):
        return op

    def _normalize_tuple(self, tup):
        fields = [self.normalize_argument(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)) and tup.struct_info_ is not None:
            return tup
        new = Tuple(fields, tup.span)
        return new

    def _normalize_tuplegetitem(self, item):
        value = self.normalize_argument(item.tuple_value)
        sinfo = value.struct_info_
        if isinstance(sinfo, TupleStructInfo):
            if not 0 <= item.index < len(sinfo.fields):
                raise IndexError(f"TupleGetItem: index {item.index} is out of range for a tuple "
                                 f"of {len(sinfo.fields)} fields")
            field = sinfo.fields[item.index]
        elif isinstance(sinfo, ObjectStructInfo):
            field = ObjectStructInfo()
        else:
            raise ValueError(f"TupleGetItem: expected a tuple, got a value of struct info "
                             f"{sinfo!r}")
        if value is not item.tuple_value:
            item = TupleGetItem(value, item.index, item.span)
        if item.struct_info_ is None:
            _set_sinfo(item, field)
        return item

    def _normalize_call(self, call):
        op = call.op if isinstance(call.op, _LEAVES) else self.normalize_argument(call.op)
        if isinstance(op, Var):
            self._normalize_var(op)
        args = [self.normalize_argument(a) for a in call.args]
        if op is not call.op or any(a is not b for a, b in zip(args, call.args)):
            call = Call(op, args, call.attrs, call.sinfo_args, call.span)
        if call.struct_info_ is None:
            _set_sinfo(call, self._infer_call(call))
        return call

    def _infer_call(self, call):
        """The struct info of ``call``'s result; an argument the operator rejects raises a
        StructInfoError (a ValueError) or StructInfoTypeError (a TypeError), both RVMErrors."""
        op = call.op
        if isinstance(op, Op):
            try:
                return op.infer_struct_info(call, self)
            except (ValueError, TypeError) as err:  # rejected arguments are rvm errors too
                wrapped = _as_struct_info_error(err)
                if wrapped is err:
                    raise
                raise wrapped from err
        fsinfo = self._callee_struct_info(op)
        if not isinstance(fsinfo, FuncStructInfo):
            raise ValueError(f"call: the callee {op!r} is not a function (struct info "
                             f"{fsinfo!r})")
        if fsinfo.params is None:
            if call.sinfo_args:
                return call.sinfo_args[0]
            return fsinfo.ret
        if len(fsinfo.params) != len(call.args):
            raise ValueError(f"call of {_callee_name(op)}: expected {len(fsinfo.params)} "
                             f"argument(s), got {len(call.args)}")
        return derive_call_ret_struct_info(fsinfo, [a.struct_info_ for a in call.args])

    def _normalize_if(self, node):
        cond = self.normalize_argument(node.cond)
        if not is_scalar_bool(cond.struct_info_):
            raise ValueError(f"If: the condition must be a bool scalar or a rank-0 tensor, got "
                             f"struct info {cond.struct_info_!r}")
        true_branch = self._normalize_branch(node.true_branch)
        false_branch = self._normalize_branch(node.false_branch)
        if (cond is not node.cond or true_branch is not node.true_branch
                or false_branch is not node.false_branch):
            node = If(cond, true_branch, false_branch, node.span)
        if node.struct_info_ is None:
            _set_sinfo(node, struct_info_lca(true_branch.struct_info_,
                                             false_branch.struct_info_))
        return node

    def _normalize_branch(self, expr):
        if isinstance(expr, SeqExpr):
            return self._normalize_seqexpr(expr)
        with self.binding_scope() as frame:
            body = self.normalize(expr)
        bindings = frame.bindings
        return SeqExpr([BindingBlock(bindings)] if bindings else [], body)

    def _normalize_seqexpr(self, seq):
        blocks = [self._normalize_block(b) for b in seq.blocks]
        with self.binding_scope() as frame:
            body = self.normalize(seq.body)
        extra = frame.bindings
        if extra:
            blocks.append(BindingBlock(extra))
        if body is seq.body and all(a is b for a, b in zip(blocks, seq.blocks)) and len(
                blocks) == len(seq.blocks) and seq.struct_info_ is not None:
            return seq
        return SeqExpr(blocks, body, seq.span)

    def _normalize_block(self, block):
        dataflow = isinstance(block, DataflowBlock)
        changed = False
        with self.binding_scope(dataflow) as frame:
            for binding in block.bindings:
                value = self.normalize(binding.value)
                changed = changed or value is not binding.value
                if binding.var.struct_info_ is None:
                    binding.var.struct_info_ = (binding.struct_info
                                                if isinstance(binding, MatchCast)
                                                else value.struct_info_)
                if value is not binding.value:
                    binding = binding.with_fields(value=value)
                self._append(binding)
        bindings = frame.bindings
        if not changed and len(bindings) == len(block.bindings):
            return block
        return type(block)(bindings, block.span)

    def _normalize_function(self, func):
        outer, self._block = self._block, None
        try:
            body = self.normalize(func.body)
        finally:
            self._block = outer
        if body is func.body and func.struct_info_ is not None:
            return func
        return Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs,
                        func.span)

    def _normalize_basefunc(self, func):
        return func


def _callee_name(op):
    if isinstance(op, (GlobalVar, Var)):
        return f"'{op.name_hint}'"
    if isinstance(op, ExternFunc):
        return f"'{op.global_symbol}'"
    return type(op).__name__


def _as_struct_info_error(err):
    """``err`` as an RVMError keeping its Python kind: an operator's inference raises plain
    ValueError/TypeError; TVM users catch ``TVMError``. Errors of other classes pass as they
    are."""
    if type(err) is ValueError:
        return StructInfoError(str(err))
    if type(err) is TypeError:
        return StructInfoTypeError(str(err))
    return err
