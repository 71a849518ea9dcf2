"""MergeCompositeFunctions: one function per region of composite calls for the same codegen.

Input: a module where FuseOpsByPattern made composite functions
(``Composite="<codegen>.<pattern>"``) called from dataflow blocks. Going
through each block in order, a call of a composite function joins the
region of a value it reads when that region belongs to the same codegen and
joining creates no cycle (no other value it reads depends on that region
through a value outside it); otherwise it starts a region. Each region
becomes a public function with ``Codegen="<codegen>"`` (its
``global_symbol`` is its name, ``fused_`` + the composite functions' names)
whose body binds the composite functions it calls as local functions and
calls them; its parameters are the values the region reads, its result the
values used outside it (a tuple when there are several). The composite
functions no longer called are removed. The regions are what RunCodegen
hands to the codegens.
"""
from rvm.ir.expr import GlobalVar
from rvm.ir.module import IRModule
from rvm.relax.analysis.var_analysis import all_global_vars
from rvm.relax.binding import DataflowBlock, SeqExpr, VarBinding
from rvm.relax.expr import Call, DataflowVar, Var
from rvm.relax.expr_functor import ExprMutator, ExprVisitor
from rvm.relax.function import Function
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.relax.transform.fuse_ops import _FunctionCreator, _leaves_of, _OperatorFusor
from rvm.relax.transform.fuse_ops_by_pattern import (
    CODEGEN, COMPOSITE, _GroupMap, is_offload_function, unique_function_name,
)
from rvm.relax.transform.graph_partitioner import OPAQUE, Group
from rvm.ir.transform import ModulePass, PassInfo


def _composite_codegen(mod, value):
    """The codegen of a call of a composite function of ``mod`` (None for other values)."""
    if not (isinstance(value, Call) and isinstance(value.op, GlobalVar)
            and value.op.name_hint in mod):
        return None
    func = mod[value.op.name_hint]
    composite = func.get_attr(COMPOSITE) if isinstance(func, Function) else None
    return composite.split(".")[0] if isinstance(composite, str) else None


class _Regions:
    """Assigns the bindings of dataflow blocks to regions (``group_of``), with the codegen of
    each region (``codegen_of``) and the regions each reads directly (``reads``)."""

    def __init__(self, mod):
        self.mod = mod
        self.group_of = _GroupMap()
        self.codegen_of = {}
        self.reads = {}

    def add_block(self, block):
        local = set()
        for binding in block.bindings:
            codegen = _composite_codegen(self.mod, binding.value)
            read = []
            for leaf in _leaves_of(binding.value):
                if isinstance(leaf, Var) and id(leaf) in local:
                    group = self.group_of[id(leaf)].find_root()
                    if all(g is not group for g in read):
                        read.append(group)
            target = None
            if codegen is not None:
                for group in read:
                    if self.codegen_of.get(id(group)) == codegen and not any(
                            other is not group and self._depends(other, group)
                            for other in read):
                        target = group
                        break
            if target is None:
                target = Group(OPAQUE, binding.var)
                self.codegen_of[id(target)] = codegen
                self.reads[id(target)] = []
                self.group_of[id(binding.var)] = target
            else:
                member = Group(OPAQUE, binding.var)
                member.parent = target
                target.num_nodes += 1
                self.group_of[id(binding.var)] = member
            for group in read:
                if group is not target and all(g is not group for g in self.reads[id(target)]):
                    self.reads[id(target)].append(group)
            local.add(id(binding.var))

    def _depends(self, group, on):
        """Whether ``group`` reads ``on``, directly or through other regions."""
        stack, seen = [group], set()
        while stack:
            current = stack.pop()
            for dep in self.reads.get(id(current), ()):
                if dep is on:
                    return True
                if id(dep) not in seen:
                    seen.add(id(dep))
                    stack.append(dep)
        return False


class _RegionCreator(_FunctionCreator):
    """The Codegen function of one region."""

    def __init__(self, fusor):
        super().__init__()
        self.fusor = fusor

    def create_function(self, mod):
        super().create_function(mod)
        if self.function is None:
            return
        codegen = self.fusor.regions.codegen_of[id(
            self.fusor.group_of[id(self.bindings[-1].var)].find_root())]
        self.name = unique_function_name(self.fusor.builder.get(), self.name,
                                         self.fusor.used)
        func = _bind_local_functions(self.function, self.fusor.composites)
        self.function = Function(func.params, func.body, func.ret_struct_info, func.is_pure,
                                 {CODEGEN: codegen, "global_symbol": self.name}, func.span)


def _bind_local_functions(func, composites):
    """``func`` with each call of a composite function (``composites``: {name: function})
    made a call of a local copy."""
    defs, bindings, local = [], [], {}
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, Call) and isinstance(value.op, GlobalVar) and \
                    value.op.name_hint in composites:
                name = value.op.name_hint
                if name not in local:
                    composite = composites[name]
                    local[name] = DataflowVar(name, composite.struct_info_)
                    defs.append(VarBinding(local[name], composite))
                value = Call(local[name], value.args, value.attrs, value.sinfo_args, value.span)
                object.__setattr__(value, "struct_info_", binding.value.struct_info_)
                binding = VarBinding(binding.var, value, binding.span)
            bindings.append(binding)
    body = SeqExpr([DataflowBlock(defs + bindings)], func.body.body)
    return Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs,
                    func.span)


class _RegionFusor(_OperatorFusor):
    """Works on the module without its composite functions (``composites``), so the regions
    may take their names."""

    def __init__(self, mod, regions, composites):
        super().__init__(mod, regions.group_of, make_creator=lambda: _RegionCreator(self))
        self.regions = regions
        self.composites = composites
        self.used = set()

    def fuses(self, group):
        return self.regions.codegen_of.get(id(group)) is not None


class _TypedCalls(ExprMutator):
    """Calls of composite functions through GlobalVars carrying the functions' struct info,
    so they stay typed in a module without those functions."""

    def __init__(self, mod, composites):
        super().__init__(mod)
        self.gvars = {}
        for name, func in composites.items():
            gvar = self.gvars[name] = GlobalVar(name)
            gvar.struct_info_ = func.struct_info_

    def visit_call_(self, call):
        new = super().visit_call_(call)
        if isinstance(new.op, GlobalVar) and new.op.name_hint in self.gvars:
            return Call(self.gvars[new.op.name_hint], new.args, new.attrs, new.sinfo_args,
                        new.span)
        return new


class _Blocks(ExprVisitor):
    def __init__(self, regions):
        self.regions = regions

    def visit_dataflow_block_(self, block):
        self.regions.add_block(block)
        self.visit_binding_block_(block)


def merge_composite_functions(mod):
    """``mod`` with composite calls grouped into Codegen functions (module docstring)."""
    regions = _Regions(mod)
    for func in mod.functions.values():
        if isinstance(func, Function) and not is_offload_function(func):
            _Blocks(regions).visit_expr(func)
    if not any(c is not None for c in regions.codegen_of.values()):
        return mod
    composites = {gv.name_hint: f for gv, f in mod.functions.items()
                  if isinstance(f, Function) and f.get_attr(COMPOSITE)}
    rest = IRModule({gv: f for gv, f in mod.functions.items()
                     if gv.name_hint not in composites}, mod.attrs)
    rest = rewrite_functions(rest, _TypedCalls(rest, composites),
                             select=lambda f: not is_offload_function(f))
    out = rewrite_functions(rest, _RegionFusor(rest, regions, composites),
                            select=lambda f: not is_offload_function(f))
    used = {gv.name_hint for func in out.functions.values() if isinstance(func, Function)
            for gv in all_global_vars(func)}
    for name, func in composites.items():  # still called from outside dataflow blocks
        if name in used and name not in out:
            out.add(name, func)
    return out


def MergeCompositeFunctions():  # noqa: N802  (passes are CamelCase factories)
    """A pass grouping composite calls into one Codegen function per region (module
    docstring)."""
    return ModulePass(lambda mod, ctx: merge_composite_functions(mod),
                      PassInfo(0, "MergeCompositeFunctions"))
