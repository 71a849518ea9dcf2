"""FuseTIR: turn each primitive Relax function (from FuseOps) into one kernel.

The kernels that a primitive function calls are put one after another in a
new PrimFunc named after the function (``fused_matmul_add_relu``): the
function's tensor parameters become its input buffers (tuples are flattened),
the values it returns become its output buffers (named as in the kernels that
write them), and every value passed between the kernels becomes a buffer
allocated inside it; symbolic dimensions are matched between each kernel's
buffers and the values it is called with. Its callers then call the new
kernel with ``call_tir`` (the trailing ``R.Shape`` parameter, if any, becomes
``tir_vars``), and the primitive functions, and the kernels only they used,
leave the module.

A primitive function that cannot be fused (a callee not in TensorIR form, a
dimension fixed in a kernel but symbolic in the caller, a value that is not a
``call_tir``) stays an ordinary private Relax function.
"""
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.ir.base import structural_equal
from rvm.relax.analysis.struct_info_analysis import derive_call_ret_struct_info
from rvm.relax.analysis.var_analysis import all_global_vars
from rvm.relax.binding import VarBinding
from rvm.relax.expr import Tuple, TupleGetItem, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.function import Function
from rvm.relax.op.base import call_tir
from rvm.relax.struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from rvm.tir import op as tir_op
from rvm.tir.buffer import decl_buffer
from rvm.tir.expr import BinaryOpExpr, Cast, IntImm, IterVar
from rvm.tir.expr import Var as TirVar
from rvm.tir.function import PrimFunc
from rvm.tir.stmt import Block, BlockRealize, For, LetStmt, stmt_seq
from rvm.tir.stmt_functor import StmtExprMutator, StmtMutator
from rvm.relax.transform.function_pass import replace_functions
from rvm.relax.transform.fuse_ops import PRIMITIVE, call_tir_callee, is_primitive
from rvm.ir.transform import ModulePass, PassInfo


class _CannotFuse(Exception):
    pass


def _match(pattern, value, var_map):
    """Binds the variables of ``pattern`` (a kernel's dimension) so that it equals ``value``."""
    if isinstance(pattern, TirVar):
        bound = var_map.get(id(pattern))
        if bound is None:
            var_map[id(pattern)] = value
            return
        if not structural_equal(bound, value):
            raise _CannotFuse(f"dimension {pattern.name_hint} is both {bound} and {value}")
        return
    if isinstance(pattern, IntImm):
        if not (isinstance(value, IntImm) and value.value == pattern.value):
            raise _CannotFuse(f"a kernel fixes a dimension to {pattern.value}, the call has "
                              f"{value}")
        return
    if type(pattern) is not type(value):
        raise _CannotFuse(f"dimension {pattern} does not match {value}")
    if isinstance(pattern, BinaryOpExpr):
        _match(pattern.a, value.a, var_map)
        _match(pattern.b, value.b, var_map)
    elif isinstance(pattern, Cast):
        _match(pattern.value, value.value, var_map)
    elif not structural_equal(pattern, value):
        raise _CannotFuse(f"dimension {pattern} does not match {value}")


def _flatten(tree):
    if isinstance(tree, list):
        return [b for item in tree for b in _flatten(item)]
    return [tree]


class _KernelInliner(StmtExprMutator):
    """A kernel body with its parameters replaced and every definition made fresh (so the
    same kernel can appear twice in one fused function)."""

    def __init__(self, var_map, buffer_map):
        self.var_map = dict(var_map)
        self.buffer_map = dict(buffer_map)

    def _fresh_var(self, var):
        new = TirVar(var.name_hint, var.dtype)
        self.var_map[id(var)] = new
        return new

    def fresh_buffer(self, buf):
        shape = [self.visit_expr(d) for d in buf.shape]
        new = decl_buffer(shape, buf.dtype, name=buf.name, scope=buf.scope)
        self.buffer_map[id(buf)] = new
        return new

    def visit_var_(self, op):
        new = self.var_map.get(id(op), op)
        if new.dtype != op.dtype:
            return tir_op.cast(new, op.dtype)
        return new

    def visit_buffer(self, buffer):
        return self.buffer_map.get(id(buffer), buffer)

    def visit_for_(self, op):
        min_, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        var = self._fresh_var(op.loop_var)
        return For(var, min_, extent, op.kind, self.visit_stmt(op.body), op.thread_binding,
                   op.annotations)

    def visit_allocate_(self, op):
        raise _CannotFuse("a lowered kernel (Allocate)")

    def visit_let_stmt_(self, op):
        value = self.visit_expr(op.value)
        var = self._fresh_var(op.var)
        return LetStmt(var, value, self.visit_stmt(op.body))

    def visit_block_(self, op):
        iter_vars = []
        for iv in op.iter_vars:
            dom = self.visit(iv.dom)
            iter_vars.append(IterVar(dom, self._fresh_var(iv.var), iv.iter_type, iv.thread_tag))
        if op.match_buffers:
            raise _CannotFuse(f"block {op.name_hint!r} has match_buffers")
        allocs = [self.fresh_buffer(b) for b in op.alloc_buffers]
        return Block(iter_vars, self.visit(op.reads), self.visit(op.writes), op.name_hint,
                     self.visit_stmt(op.body),
                     None if op.init is None else self.visit_stmt(op.init),
                     allocs, (), op.annotations)


class _BlockNamer(StmtMutator):
    """Makes block names unique: the second ``T_add`` becomes ``T_add_1``."""

    def __init__(self):
        self.used = set()

    def visit_block_(self, op):
        op = super().visit_block_(op)
        name, k = op.name_hint, 0
        while name in self.used:
            k += 1
            name = f"{op.name_hint}_{k}"
        self.used.add(name)
        return op if name == op.name_hint else op.with_fields(name_hint=name)


class _FusedKernelBuilder:
    """Builds the PrimFunc of one primitive Relax function."""

    def __init__(self, mod, func):
        self.mod = mod
        self.func = func
        self.params = []
        self.buffer_map = {}
        self.scalars = []
        self.buffers_of = {}
        self.locals = []
        self.stmts = []

    def build(self):
        for param in self.func.params:
            sinfo = param.struct_info_
            if isinstance(sinfo, ShapeStructInfo):
                if sinfo.values is None or not all(isinstance(v, TirVar) for v in sinfo.values):
                    raise _CannotFuse(f"shape parameter '{param.name_hint}' is not a list of "
                                      "symbolic variables")
                self.scalars.extend(sinfo.values)
                continue
            tree = self._param_buffers(sinfo, param.name_hint)
            self.buffers_of[id(param)] = tree
        body = self.func.body
        for block in body.blocks:
            for binding in block.bindings:
                if not isinstance(binding, VarBinding):
                    raise _CannotFuse("a match_cast")
                self.buffers_of[id(binding.var)] = self._value(binding.value)
        outputs = _flatten(self._value(body.body))
        local_ids = {id(b) for b in self.locals}
        if len({id(b) for b in outputs}) != len(outputs) or any(
                id(b) not in local_ids for b in outputs):
            raise _CannotFuse("a result is a parameter or is returned twice")
        for buf in outputs:
            handle = TirVar(buf.name, "handle")
            self.params.append(handle)
            self.buffer_map[handle] = buf
        out_ids = {id(b) for b in outputs}
        allocs = [b for b in self.locals if id(b) not in out_ids]
        root = Block([], [], [], "root", _BlockNamer().visit_stmt(stmt_seq(*self.stmts)),
                     alloc_buffers=allocs)
        return PrimFunc(self.params + self.scalars, BlockRealize([], True, root),
                        buffer_map=self.buffer_map, attrs={"tir.noalias": True})

    def _param_buffers(self, sinfo, name):
        if isinstance(sinfo, TupleStructInfo):
            return [self._param_buffers(f, f"{name}_{k}") for k, f in enumerate(sinfo.fields)]
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape_values is None \
                or sinfo.dtype is None:
            raise _CannotFuse(f"parameter '{name}' is not a tensor of known shape and dtype")
        handle = TirVar(name, "handle")
        buf = decl_buffer(list(sinfo.shape_values), sinfo.dtype, name=name)
        self.params.append(handle)
        self.buffer_map[handle] = buf
        return buf

    def _value(self, expr):
        if isinstance(expr, Var):
            if id(expr) not in self.buffers_of:
                raise _CannotFuse(f"'{expr.name_hint}' is not a tensor value of the function")
            return self.buffers_of[id(expr)]
        if isinstance(expr, Tuple):
            return [self._value(f) for f in expr.fields]
        if isinstance(expr, TupleGetItem):
            tree = self._value(expr.tuple_value)
            return tree[expr.index]
        if call_tir_callee(expr, self.mod) is not None:
            return self._call(expr)
        raise _CannotFuse(f"a {type(expr).__name__} binding")

    def _call(self, call):
        callee = call_tir_callee(call, self.mod)
        if not isinstance(callee.body, BlockRealize) or callee.body.block.iter_vars:
            raise _CannotFuse(f"kernel '{call.args[0].name_hint}' is not in TensorIR form")
        inputs = _flatten(self._value(call.args[1]))
        out = call.sinfo_args[0]
        out_sinfos = list(out.fields) if isinstance(out, TupleStructInfo) else [out]
        buffers = [p for p in callee.params if p in callee.buffer_map]
        scalars = [p for p in callee.params if p not in callee.buffer_map]
        if len(buffers) != len(inputs) + len(out_sinfos):
            raise _CannotFuse(f"kernel '{call.args[0].name_hint}' takes {len(buffers)} buffers")
        var_map, buffer_map = {}, {}
        if scalars:
            if len(call.args) < 3 or len(call.args[2].values) != len(scalars):
                raise _CannotFuse("symbolic arguments do not match the kernel's")
            for var, value in zip(scalars, call.args[2].values):
                _match(var, value, var_map)
        outputs = []
        for sinfo in out_sinfos:
            if sinfo.shape_values is None or sinfo.dtype is None:
                raise _CannotFuse("an output of unknown shape")
        for handle, target in zip(buffers, inputs + [None] * len(out_sinfos)):
            src = callee.buffer_map[handle]
            if target is None:
                sinfo = out_sinfos[len(outputs)]
                target = decl_buffer(list(sinfo.shape_values), sinfo.dtype, name=src.name)
                outputs.append(target)
                self.locals.append(target)
            if src.strides or src.dtype != target.dtype or len(src.shape) != len(target.shape):
                raise _CannotFuse(f"buffer {src.name!r} does not match its argument")
            for dim, value in zip(src.shape, target.shape):
                _match(dim, value, var_map)
            buffer_map[id(src)] = target
            var_map[id(src.data)] = target.data
        inliner = _KernelInliner(var_map, buffer_map)
        root = callee.body.block
        self.locals.extend(inliner.fresh_buffer(b) for b in root.alloc_buffers)
        self.stmts.append(inliner.visit_stmt(root.body))
        return outputs[0] if not isinstance(out, TupleStructInfo) else outputs


class _CallRewriter(ExprMutator):
    """Calls of fused primitive functions become call_tir of their kernels."""

    def __init__(self, mod, fused):
        super().__init__(mod)
        self.fused = fused  # name -> (GlobalVar of the kernel, primitive function)

    def visit_call_(self, call):
        new = super().visit_call_(call)
        if not (isinstance(new.op, GlobalVar) and new.op.name_hint in self.fused):
            return new
        gvar, func = self.fused[new.op.name_hint]
        args, tir_vars = [], None
        for param, arg in zip(func.params, new.args):
            if isinstance(param.struct_info_, ShapeStructInfo):
                tir_vars = arg
            else:
                args.extend(self._flat(arg))
        out = derive_call_ret_struct_info(func.struct_info_, [a.struct_info_ for a in new.args])
        out_sinfo = list(out.fields) if isinstance(out, TupleStructInfo) else out
        return call_tir(gvar, args, out_sinfo, tir_vars=tir_vars)

    def _flat(self, arg):
        sinfo = arg.struct_info_
        if not isinstance(sinfo, TupleStructInfo):
            return [arg]
        fields = arg.fields if isinstance(arg, Tuple) else [
            self.builder.emit(TupleGetItem(arg, k)) for k in range(len(sinfo.fields))]
        return [leaf for f in fields for leaf in self._flat(f)]


def fuse_tir(mod):
    """``mod`` with every primitive function fused into one kernel (module docstring)."""
    kernels, kept = {}, {}
    for gv, func in mod.functions.items():
        if not is_primitive(func):
            continue
        try:
            kernels[gv.name_hint] = _FusedKernelBuilder(mod, func).build()
        except _CannotFuse:
            attrs = {k: v for k, v in func.attrs.items() if k != PRIMITIVE}
            kept[gv.name_hint] = Function(func.params, func.body, func.ret_struct_info,
                                          func.is_pure, attrs, func.span)
    if not kernels and not kept:
        return mod
    out = IRModule({}, mod.attrs)
    fused = {}
    for gv, func in mod.functions.items():
        name = gv.name_hint
        if name in kernels:
            fused[name] = (out.add(name, kernels[name]), func)
        else:
            out.add(name, kept.get(name, func))
    rewriter = _CallRewriter(out, fused)
    changed = {}
    for gv, func in out.functions.items():
        if isinstance(func, Function):
            new = rewriter.visit_expr(func)
            if new is not func:
                changed[gv] = new
    out = replace_functions(out, changed)
    callees = set()
    for func in out.functions.values():
        if isinstance(func, Function):
            callees.update(g.name_hint for g in all_global_vars(func))
    return _drop_unused_kernels(out, mod, callees)


def _drop_unused_kernels(out, mod, callees):
    """Removes the kernels that only primitive functions called."""
    used_by_primitive = set()
    for func in mod.functions.values():
        if is_primitive(func):
            used_by_primitive.update(g.name_hint for g in all_global_vars(func))
    for name in used_by_primitive - callees:
        if name in out and isinstance(out[name], PrimFunc):
            out.remove(name)
    return out


def FuseTIR():  # noqa: N802  (passes are CamelCase factories)
    """A pass fusing each primitive Relax function into one kernel (module docstring)."""
    return ModulePass(lambda mod, ctx: fuse_tir(mod), PassInfo(0, "FuseTIR"))
