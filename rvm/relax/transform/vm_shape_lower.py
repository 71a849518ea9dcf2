"""VMShapeLower: check parameters at function entry and lower symbolic shapes to the shape heap.

For each Relax function:

1. A shape heap is allocated (``vm.builtin.alloc_shape_heap``, one int64 slot
   per symbolic variable and per derived dimension such as ``n * 2``).
2. Each parameter is checked against its struct info (``vm.builtin.check_tensor_info``,
   ``check_shape_info``, ``check_tuple_info``, recursively into tuple fields,
   ``check_prim_value_info``, ``check_func_info``),
   then ``vm.builtin.match_shape`` (``match_prim_value`` for an ``R.Prim(value=n)``
   parameter) stores the dimensions that define symbolic
   variables into the heap and checks the others (constants, variables seen
   before). A variable that is a size in some tensor's shape in the function
   (``n``, or a factor of ``n * m``: rvm.tir.analysis.size_vars) is refused there
   when bound to a negative value, naming the parameter (``STORE_SIZE``), rather
   than deep inside a kernel. The error context of every check reads
   ``"main: parameter 'w0' expects float32[n, m]"``, so a failure names the
   function, the parameter, and expected vs actual values.
3. Derived dimensions are computed by a generated shape-function PrimFunc
   (added to the module, compiled with the kernels), called with the heap,
   then checked where parameters declare them. A derived dimension of a tensor
   that may come out negative (``n - 5``) is checked right after it is computed
   (``vm.builtin.check_size``, rvm.relax.transform.size_checks), naming it, its
   tensor and the variables' values, before an allocation or a kernel sees it.
4. ``match_cast`` bindings are lowered the same way (checks, matches) and
   become plain bindings.
   The value a callable parameter or closure returns (a call whose callee is
   a Relax variable: code from outside, or a closure) is checked against the
   call's struct info the same way ("main: the value returned by 'f' expects
   float32[2]"): its kind, dtype, rank, and each dimension that is a
   constant or an already defined variable.
5. Symbolic ``ShapeExpr``s in binding values become ``vm.builtin.make_shape``
   calls reading the heap; symbolic ``PrimValue``s become a one-dimension
   ``make_shape`` followed by ``vm.builtin.tuple_getitem``.

Afterwards no binding value mentions a symbolic variable.
"""
from rvm.bytecode.contract import MakeCode, MatchCode
from rvm.ir.expr import GlobalVar
from rvm.relax.binding import BindingBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, DataTypeImm, ExternFunc, If, PrimValue, ShapeExpr, StringImm, Tuple, TupleGetItem,
    Var,
)
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.function import Function
from rvm.relax.op.memory import call_builtin_with_ctx, null_value
from rvm.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, TensorStructInfo,
    TupleStructInfo,
)
from rvm.tir.analysis.size_vars import dimension_sizes
from rvm.tir.expr import FloatImm, IntImm, Var as TirVar
from rvm.relax.transform.lowering_util import bind
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.transform.shape_func import HeapLayout, make_shape_func, tir_vars_of
from rvm.relax.transform.size_checks import (
    check_size_binding, may_be_negative, tensor_dim_owners,
)
from rvm.relax.transform.sinfo_text import dim_text as sinfo_text_dim
from rvm.relax.transform.sinfo_text import sinfo_text

MATCH_EQUAL_IMM, MATCH_STORE, MATCH_NO_OP, MATCH_EQUAL_HEAP, MATCH_STORE_SIZE = (
    int(c) for c in (MatchCode.EQUAL_IMM, MatchCode.STORE, MatchCode.NO_OP, MatchCode.EQUAL_HEAP,
                     MatchCode.STORE_SIZE))
MAKE_IMM, MAKE_LOAD = int(MakeCode.IMM), int(MakeCode.LOAD)


def _is_const(expr):
    return isinstance(expr, (IntImm, FloatImm))


def _extern(name, args, sinfo=None):
    call = Call(ExternFunc(name), args)
    object.__setattr__(call, "struct_info_", sinfo or ObjectStructInfo())
    return call


class _PrimCollector(ExprVisitor):
    """Derived (non-variable, non-constant) dimensions used by a function."""

    def __init__(self):
        self.found = []
        self.variables = []
        self.sizes = set()  # ids of the variables that are a tensor's dimension somewhere

    def add(self, expr):
        if isinstance(expr, TirVar):
            self.variables.append(expr)
        elif not _is_const(expr):
            self.found.append(expr)

    def add_sinfo(self, sinfo):
        if isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
            self.add(sinfo.value)
        elif isinstance(sinfo, TensorStructInfo):
            for dim in sinfo.shape_values or ():
                self.add(dim)
        elif isinstance(sinfo, ShapeStructInfo):
            for dim in sinfo.values or ():
                self.add(dim)
        elif isinstance(sinfo, TupleStructInfo):
            for field in sinfo.fields:
                self.add_sinfo(field)

    def visit_relax_expr_(self, expr):
        if isinstance(expr, ShapeExpr):
            for dim in expr.values:
                self.add(dim)
        elif isinstance(expr, PrimValue):
            self.add(expr.value)

    def visit_match_cast_(self, binding):
        super().visit_match_cast_(binding)
        self.add_sinfo(binding.struct_info)

    def visit_var_def(self, var):
        super().visit_var_def(var)
        add_sizes(var.struct_info_, self.sizes)


def add_sizes(sinfo, sizes):
    """Adds to ``sizes`` the ids of the variables that are sizes in a tensor's shape in
    ``sinfo`` (``n`` or a factor of ``n * m``: a negative value bound to one is refused
    where it is bound)."""
    if isinstance(sinfo, TensorStructInfo):
        sizes.update(id(v) for d in sinfo.shape_values or () for v in dimension_sizes(d))
    elif isinstance(sinfo, TupleStructInfo):
        for field in sinfo.fields:
            add_sizes(field, sizes)


class _FunctionLowerer:
    def __init__(self, func, name, new_func_name):
        self.func = func
        self.name = name
        self.new_func_name = new_func_name
        self.layout = HeapLayout()
        self.defined = set()  # ids of the TIR variables stored in the heap so far
        self.computed = set()  # heap slots of derived dimensions computed so far
        self.shape_funcs = []
        collector = _PrimCollector()
        for param in func.params:
            collector.add_sinfo(param.struct_info_)
            add_sizes(param.struct_info_, collector.sizes)
        collector.visit_expr(func.body)
        add_sizes(func.ret_struct_info, collector.sizes)
        self.sizes = collector.sizes
        for var in collector.variables:
            self.layout.var_slot(var)
        self.pending = []
        for expr in collector.found:
            if self.layout.expr_slot(expr, allocate=False) is None:
                self.layout.expr_slot(expr)
                self.pending.append(expr)
        for expr in self.pending:
            for var in tir_vars_of(expr):
                self.layout.var_slot(var)
        # heap slot -> (dim, tensor, sinfo): computed tensor dimensions that may be negative
        self.size_checks = {}
        for dim, owner, sinfo in tensor_dim_owners(func):
            slot = self.layout.expr_slot(dim, allocate=False)
            if slot is not None and slot not in self.size_checks and \
                    may_be_negative(dim, self.sizes):
                self.size_checks[slot] = (dim, owner, sinfo)
        self.heap = None
        self.shape_cache = {}
        self.checking_result = False  # only check dimensions (define no variable)

    # -- checks and matches ------------------------------------------------------------------
    def match(self, value, sinfo, ctx, out, phase):
        """Emits the checks of ``value`` against ``sinfo``; phase 1 checks kinds and stores
        variables, phase 2 checks derived dimensions once they are computed."""
        err = StringImm(f"{ctx} expects {sinfo_text(sinfo)}")
        if isinstance(sinfo, TensorStructInfo):
            if phase == 1:
                dtype = DataTypeImm(sinfo.dtype) if sinfo.dtype is not None else StringImm("")
                out.append(bind("_", _extern("vm.builtin.check_tensor_info", [
                    value, PrimValue(sinfo.ndim), dtype, err]))[1])
            # a tensor's dimensions are never negative: no size check needed
            self.match_dims(value, sinfo.shape_values, out, phase, err, nonneg=True)
        elif isinstance(sinfo, ShapeStructInfo):
            if phase == 1:
                out.append(bind("_", _extern("vm.builtin.check_shape_info", [
                    value, PrimValue(sinfo.ndim), err]))[1])
            self.match_dims(value, sinfo.values, out, phase, err)
        elif isinstance(sinfo, PrimStructInfo):
            if phase == 1:
                dtype = DataTypeImm(sinfo.dtype) if sinfo.dtype is not None else StringImm("")
                out.append(bind("_", _extern("vm.builtin.check_prim_value_info", [
                    value, dtype, err]))[1])
            if sinfo.value is not None and sinfo.dtype is not None and (
                    sinfo.dtype.is_int or sinfo.dtype.is_uint):
                self.match_prim(value, sinfo.value, out, phase, err)
        elif isinstance(sinfo, FuncStructInfo):
            if phase == 1:
                out.append(bind("_", _extern("vm.builtin.check_func_info", [value, err]))[1])
        elif isinstance(sinfo, TupleStructInfo):
            if phase == 1:
                out.append(bind("_", _extern("vm.builtin.check_tuple_info", [
                    value, PrimValue(len(sinfo.fields)), err]))[1])
            for i, field in enumerate(sinfo.fields):
                if not isinstance(field, (TensorStructInfo, ShapeStructInfo, TupleStructInfo,
                                          PrimStructInfo, FuncStructInfo)):
                    continue
                item, binding = bind(f"{getattr(value, 'name_hint', 'tuple')}_{i}",
                                     TupleGetItem(value, i))
                checks = []
                self.match(item, field, f"{ctx} field {i}", checks, phase)
                if checks:  # phase 2 often has nothing left to check in a field
                    out.append(binding)
                    out.extend(checks)

    def match_prim(self, value, expr, out, phase, err):
        """The check of an integer scalar against ``expr`` (as match_dims does one dimension)."""
        codes = []
        self.match_dims(None, [expr], None, phase, err, codes)
        if codes and codes[0] != MATCH_NO_OP:
            out.append(bind("_", _extern("vm.builtin.match_prim_value", [
                value, self.heap, PrimValue(codes[0]), PrimValue(codes[1]), err]))[1])

    def match_dims(self, value, dims, out, phase, err, codes_out=None, nonneg=False):
        if dims is None:
            return
        codes = []
        useful = False
        for dim in dims:
            if self.checking_result:
                if isinstance(dim, IntImm):
                    codes += [MATCH_EQUAL_IMM, dim.value]
                elif isinstance(dim, TirVar) and id(dim) in self.defined:
                    codes += [MATCH_EQUAL_HEAP, self.layout.var_slot(dim)]
                else:
                    slot = None if _is_const(dim) or isinstance(dim, TirVar) else \
                        self.layout.expr_slot(dim, allocate=False)
                    if slot is None or slot not in self.computed:
                        codes += [MATCH_NO_OP, 0]
                        continue
                    codes += [MATCH_EQUAL_HEAP, slot]
                useful = True
            elif phase == 2:
                slot = None if _is_const(dim) or isinstance(dim, TirVar) else \
                    self.layout.expr_slot(dim, allocate=False)
                if slot is None or slot not in self.computed:
                    codes += [MATCH_NO_OP, 0]
                else:
                    codes += [MATCH_EQUAL_HEAP, slot]
                    useful = True
            elif isinstance(dim, IntImm):
                codes += [MATCH_EQUAL_IMM, dim.value]
                useful = True
            elif isinstance(dim, TirVar):
                slot = self.layout.var_slot(dim)
                store = MATCH_STORE_SIZE if id(dim) in self.sizes and not nonneg else MATCH_STORE
                codes += [MATCH_EQUAL_HEAP if id(dim) in self.defined else store, slot]
                self.defined.add(id(dim))
                useful = True
            else:
                codes += [MATCH_NO_OP, 0]
        if codes_out is not None:  # the codes alone (match_prim)
            codes_out.extend(codes)
        elif useful:
            args = [value, self.heap, PrimValue(len(dims))] + [PrimValue(c) for c in codes]
            out.append(bind("_", _extern("vm.builtin.match_shape", args + [err]))[1])

    def compute_pending(self, out):
        """Emits a shape function for the derived dimensions that became computable."""
        ready = [e for e in self.pending
                 if self.layout.expr_slot(e, allocate=False) not in self.computed
                 and all(id(v) in self.defined for v in tir_vars_of(e))]
        if not ready:
            return
        for expr in ready:
            self.computed.add(self.layout.expr_slot(expr, allocate=False))
        name = self.new_func_name(f"shape_func_{self.name}")
        self.shape_funcs.append((name, make_shape_func(self.layout, ready, name)))
        call = Call(GlobalVar(name), [self.heap])
        object.__setattr__(call, "struct_info_", TupleStructInfo([]))
        out.append(bind("_", call)[1])
        for expr in ready:
            slot = self.layout.expr_slot(expr, allocate=False)
            if slot in self.size_checks:
                dim, owner, sinfo = self.size_checks[slot]
                var_slots = [(v, self.layout.var_slot(v)) for v in tir_vars_of(dim)]
                out.append(check_size_binding(self.name, dim, owner, sinfo, self.heap, slot,
                                              var_slots))

    # -- values ------------------------------------------------------------------------------
    def slot_code(self, dim, where):
        if isinstance(dim, IntImm):
            return [MAKE_IMM, dim.value]
        if isinstance(dim, TirVar):
            if id(dim) not in self.defined:
                raise ValueError(f"VMShapeLower: {self.name}: symbolic variable "
                                 f"'{dim.name_hint}' is used in {where} but never defined by a "
                                 "parameter's shape or a match_cast")
            return [MAKE_LOAD, self.layout.var_slot(dim)]
        slot = self.layout.expr_slot(dim, allocate=False)
        if slot is None or slot not in self.computed:
            missing = [v.name_hint for v in tir_vars_of(dim) if id(v) not in self.defined]
            raise ValueError(f"VMShapeLower: {self.name}: dimension {sinfo_text_dim(dim)} is "
                             f"used in {where} but {', '.join(missing)} is never defined by a "
                             "parameter's shape or a match_cast")
        return [MAKE_LOAD, slot]

    def make_shape(self, dims, out, where):
        codes = []
        for dim in dims:
            codes += self.slot_code(dim, where)
        key = (len(dims), tuple(codes))
        if key in self.shape_cache:
            return self.shape_cache[key]
        args = [self.heap, PrimValue(len(dims))] + [PrimValue(c) for c in codes]
        var, binding = bind("shape", _extern("vm.builtin.make_shape", args,
                                              ShapeStructInfo(ndim=len(dims))))
        out.append(binding)
        self.shape_cache[key] = var
        return var

    def value(self, expr, out, where):
        if isinstance(expr, ShapeExpr):
            if all(isinstance(d, IntImm) for d in expr.values):
                return expr
            return self.make_shape(expr.values, out, where)
        if isinstance(expr, PrimValue):
            if _is_const(expr.value):
                return expr
            shape = self.make_shape([expr.value], out, where)
            var, binding = bind("prim", _extern("vm.builtin.tuple_getitem",
                                                [shape, PrimValue(0)], expr.struct_info_))
            out.append(binding)
            return var
        if isinstance(expr, Tuple):
            fields = [self.value(f, out, where) for f in expr.fields]
            if all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields, expr.span)
        if isinstance(expr, Call):
            args = [self.value(a, out, where) for a in expr.args]
            if all(a is b for a, b in zip(args, expr.args)):
                return expr
            call = Call(expr.op, args, expr.attrs, expr.sinfo_args, expr.span)
            object.__setattr__(call, "struct_info_", expr.struct_info_)
            return call
        if isinstance(expr, If):
            new_if = If(expr.cond, self.seq(expr.true_branch), self.seq(expr.false_branch),
                        expr.span)
            object.__setattr__(new_if, "struct_info_", expr.struct_info_)
            return new_if
        return expr

    def seq(self, seq):
        if not isinstance(seq, SeqExpr):
            seq = SeqExpr([], seq)
        out = []
        outer_cache = self.shape_cache
        self.shape_cache = dict(outer_cache)  # shapes made in a branch stay in the branch
        for block in seq.blocks:
            for binding in block.bindings:
                self.binding(binding, out)
        self.shape_cache = outer_cache
        return SeqExpr([BindingBlock(out)] if out else [], seq.body, seq.span)

    def binding(self, binding, out):
        where = f"the binding of '{binding.var.name_hint}'"
        if isinstance(binding, MatchCast):
            value = self.value(binding.value, out, where)
            ctx = f"{self.name}: match_cast of '{binding.var.name_hint}'"
            self.match(value, binding.struct_info, ctx, out, 1)
            self.compute_pending(out)
            self.match(value, binding.struct_info, ctx, out, 2)
            out.append(VarBinding(binding.var, value, binding.span))
            return
        value = self.value(binding.value, out, where)
        out.append(binding if value is binding.value else
                   VarBinding(binding.var, value, binding.span))
        if isinstance(value, Call) and isinstance(value.op, Var) and \
                isinstance(value.op.struct_info_, FuncStructInfo):
            self.check_result(binding.var, value.op.name_hint, out)

    def check_result(self, var, callee, out):
        """Checks of the value a callable or closure returned, against ``var``'s struct info."""
        sinfo = var.struct_info_
        if not isinstance(sinfo, (TensorStructInfo, ShapeStructInfo, TupleStructInfo,
                                  PrimStructInfo, FuncStructInfo)):
            return
        self.checking_result = True
        try:
            self.match(var, sinfo, f"{self.name}: the value returned by '{callee}'", out, 1)
        finally:
            self.checking_result = False

    def lower(self):
        out = []
        body = self.func.body
        if self.layout.size:
            heap_call = call_builtin_with_ctx("vm.builtin.alloc_shape_heap",
                                              [PrimValue(self.layout.size)],
                                              TensorStructInfo(ndim=1, dtype="int64"))
            self.heap, binding = bind("shape_heap", heap_call)
        else:
            self.heap, binding = bind("shape_heap", null_value())
        out.append(binding)
        for phase in (1, 2):
            if phase == 2:
                self.compute_pending(out)
            for param in self.func.params:
                ctx = f"{self.name}: parameter '{param.name_hint}'"
                self.match(param, param.struct_info_, ctx, out, phase)
        rest = self.seq(body)
        blocks = [BindingBlock(out + [b for blk in rest.blocks for b in blk.bindings])]
        return self.func.with_fields(body=SeqExpr(blocks, rest.body, rest.span))


def vm_shape_lower(mod):
    """``mod`` with every Relax function's shapes lowered (module docstring)."""
    out = mod.copy()
    taken = {gv.name_hint for gv in mod.get_global_vars()}

    def new_name(base):
        name, i = base, 1
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        return name

    for gv, func in mod.functions.items():
        if not isinstance(func, Function):
            continue
        lowerer = _FunctionLowerer(func, func.get_attr("global_symbol") or gv.name_hint,
                                   new_name)
        out.update_func(gv, lowerer.lower())
        for name, shape_func in lowerer.shape_funcs:
            out.add(name, shape_func)
    return out


def VMShapeLower():  # noqa: N802  (passes are CamelCase factories)
    """A pass lowering parameter checks and symbolic shapes to VM builtins (module docstring)."""
    return ModulePass(lambda mod, ctx: vm_shape_lower(mod), PassInfo(0, "VMShapeLower"))

