"""FuseOps: group the kernel calls of dataflow blocks into primitive Relax functions.

Each ``call_tir`` binding becomes a node of a dataflow graph with its
kernel's ``op_pattern`` (``AnnotateTIROpPattern`` sets it; a kernel without
one is opaque); ``graph_partitioner`` decides the groups. Every group of more
than one binding becomes a private Relax function with the attribute
``Primitive`` (named ``fused_`` + the kernels' names, ``fused_matmul_add_relu``)
whose parameters are the values it reads from outside (constants included),
and whose result is every value used outside the group (a tuple when there
are several). The bindings are replaced by one call of it, where the group's
last binding was. FuseTIR then turns each primitive function into one kernel.

Symbolic dimensions that a group's parameters do not define are passed in a
trailing ``R.Shape`` parameter; each function gets fresh symbolic variables.
``fuse_opt_level`` -1 takes the PassContext's opt_level: at 0 nothing fuses.
The PassContext config ``"relax.FuseOps.max_depth"`` bounds a group (256).
"""
from rvm.ir.expr import GlobalVar
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars, definable_tir_vars
from rvm.relax.binding import DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.expr import (
    Call, Constant, DataTypeImm, DataflowVar, PrimValue, ShapeExpr, StringImm, Tuple,
    TupleGetItem, Var,
)
from rvm.relax.expr_functor import ExprMutator, ExprVisitor
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import ShapeStructInfo
from rvm.tir.expr import Var as TirVar
from rvm.tir.function import PrimFunc
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.relax.transform.graph_partitioner import (
    ELEMWISE, OPAQUE, GraphPartitioner, IndexedForwardGraph,
)
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.transform.symbolic import SymbolicBinder

PRIMITIVE = "Primitive"
MAX_DEPTH_CONFIG = "relax.FuseOps.max_depth"
_CONST_LEAVES = (Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm)


def is_primitive(func):
    """Whether ``func`` is a Relax function made by FuseOps (attribute ``Primitive``)."""
    return isinstance(func, Function) and bool(func.get_attr(PRIMITIVE))


def call_tir_callee(call, mod):
    """The PrimFunc a ``call_tir`` calls (None for other calls or an unknown callee)."""
    if not (isinstance(call, Call) and isinstance(call.op, Op)
            and call.op.name == "relax.call_tir" and isinstance(call.args[0], GlobalVar)):
        return None
    gvar = call.args[0]
    func = mod[gvar.name_hint] if gvar.name_hint in mod else None
    return func if isinstance(func, PrimFunc) else None


class _Leaves(ExprVisitor):
    """The variables and constants an expression reads, in order."""

    def __init__(self):
        self.found = []

    def visit_var_(self, var):
        self.found.append(var)

    def visit_relax_expr_(self, expr):
        if isinstance(expr, Constant):
            self.found.append(expr)

    def visit_function_(self, func):
        pass  # a nested function is opaque; its free variables are not edges here


def _leaves_of(expr):
    collector = _Leaves()
    collector.visit_expr(expr)
    return collector.found


class _GraphCreator(ExprVisitor):
    """The dataflow graph of every dataflow block of the non-primitive Relax functions."""

    def __init__(self, mod):
        self.mod = mod
        self.graph = IndexedForwardGraph()

    def build(self):
        for func in self.mod.functions.values():
            if isinstance(func, Function) and not is_primitive(func):
                self.visit_expr(func)
        return self.graph

    def visit_function_(self, func):
        for param in func.params:
            if self.graph.lookup(param) is None:
                self.graph.add_node(param, OPAQUE, extern_ref=True)
        self.visit_expr(func.body)

    def visit_binding_block_(self, block):
        # bindings outside dataflow blocks may have effects: no nodes, but nested blocks count
        for binding in block.bindings:
            self.visit_expr(binding.value)

    def visit_dataflow_block_(self, block):
        for binding in block.bindings:
            self._add_binding(binding)

    def _add_binding(self, binding):
        extern = not isinstance(binding.var, DataflowVar)
        value = binding.value
        callee = call_tir_callee(value, self.mod)
        if isinstance(binding, MatchCast):
            pattern, leaves = OPAQUE, [value]  # it reads its value: an edge like any use
        elif callee is not None:
            pattern = callee.get_attr("op_pattern", OPAQUE)
            leaves = [value.args[1]]
        elif isinstance(value, Call):
            pattern = OPAQUE
            leaves = list(value.args) + ([value.op] if isinstance(value.op, Var) else [])
        elif isinstance(value, TupleGetItem):
            # a projection of one field: elementwise with respect to that field, so a
            # multi-output kernel (batch_norm) still takes its epilogue (relu)
            pattern, leaves = ELEMWISE, [value.tuple_value]
        else:
            pattern, leaves = OPAQUE, _leaves_of(value)
        sources = [n for leaf in leaves for n in self._leaf_nodes(leaf)]
        node = self.graph.add_node(binding.var, pattern, extern_ref=extern)
        for source in sources:
            self.graph.add_edge(source, node, pattern)

    def _leaf_nodes(self, expr):
        if isinstance(expr, Tuple):
            return [n for f in expr.fields for n in self._leaf_nodes(f)]
        if not isinstance(expr, (Var,) + _CONST_LEAVES):
            return []  # GlobalVar, ExternFunc, Op: not values of the graph
        node = self.graph.lookup(expr)
        if node is None:  # a constant, or a variable bound outside any dataflow block
            node = self.graph.add_node(expr, OPAQUE, extern_ref=isinstance(expr, Var))
        return [node]


class _FunctionCreator:
    """Collects the bindings of one group and makes its primitive function."""

    def __init__(self):
        self.bindings = []
        self.params = []
        self.arguments = []
        self.name = "fused"
        self.outputs = []
        self.function = None
        self._defined = set()
        self._constants = 0

    def append(self, binding):
        value = binding.value
        if isinstance(value, Call):
            if isinstance(value.op, Op) and value.op.name == "relax.call_tir":
                self.name += "_" + value.args[0].name_hint
                args = value.args[1]
                for arg in (args.fields if isinstance(args, Tuple) else [args]):
                    self._use(arg)
            else:
                op = value.op
                label = op.name if isinstance(op, Op) else getattr(op, "name_hint", "call")
                self.name += "_" + (label[len("fused_"):] if label.startswith("fused_")
                                    else label).replace("relax.", "").replace(".", "_")
                for leaf in _leaves_of(value):
                    self._use(leaf)
        else:
            for leaf in _leaves_of(value):
                self._use(leaf)
        self._defined.add(id(binding.var))
        if not isinstance(binding.var, DataflowVar):
            self.append_output(binding.var)
        self.bindings.append(binding)

    def append_output(self, var):
        """Makes ``var`` (defined in the group) a result; returns its index among them."""
        for k, out in enumerate(self.outputs):
            if out is var:
                return k
        self.outputs.append(var)
        return len(self.outputs) - 1

    def _use(self, expr):
        if any(a is expr for a in self.arguments):
            return
        if isinstance(expr, Var) and id(expr) in self._defined:
            return
        if not isinstance(expr, (Var, Constant)):
            return  # shapes, prim values and strings stay inline
        if isinstance(expr, Var):
            name = expr.name_hint
        else:
            name = f"param_{self._constants}"
            self._constants += 1
        self.params.append(Var(name, expr.struct_info_))
        self.arguments.append(expr)

    def create_function(self, mod):
        if not self.outputs:
            return  # nothing of the group is used: dead code, left for DeadCodeElimination
        remap = _Remapper(mod, self.arguments, self.params)
        bindings, results = [], {}
        for binding in self.bindings:
            value = remap.visit_expr(binding.value)
            is_output = any(binding.var is o for o in self.outputs)
            cls = Var if is_output else DataflowVar
            var = cls(binding.var.name_hint, value.struct_info_)
            remap.set_var_remap(binding.var, var)
            bindings.append(VarBinding(var, value))
            if is_output:
                results[id(binding.var)] = var
        outs = [results[id(o)] for o in self.outputs]
        body = remap.builder.normalize(outs[0] if len(outs) == 1 else Tuple(outs))
        params = list(self.params)
        free = _free_symbolic_vars(params, bindings)
        if free:
            params.append(Var("tir_vars", ShapeStructInfo(free)))
            self.arguments.append(ShapeExpr(free))
        func = Function(params, SeqExpr([DataflowBlock(bindings)], body),
                        attrs={PRIMITIVE: True})
        self.function = _renew_symbolic_vars(func)


class _Remapper(ExprMutator):
    def __init__(self, mod, arguments, params):
        super().__init__(mod)
        self.constants = {}
        for arg, param in zip(arguments, params):
            if isinstance(arg, Var):
                self.set_var_remap(arg, param)
            else:
                self.constants[id(arg)] = param

    def visit_relax_expr_(self, expr):
        return self.constants.get(id(expr), expr)


def _free_symbolic_vars(params, bindings):
    defined = {id(v) for p in params for v in definable_tir_vars(p.struct_info_)}
    used = collect_tir_vars([[b.var.struct_info_, b.value] for b in bindings])
    return [v for v in used if id(v) not in defined]


def _renew_symbolic_vars(func):
    mapping = {}
    for param in func.params:
        for v in definable_tir_vars(param.struct_info_):
            mapping.setdefault(id(v), TirVar(v.name_hint, v.dtype))
    if not mapping:
        return func
    return SymbolicBinder(mapping).bind_function(func, func.params)


class _OperatorFusor(ExprMutator):
    """Replaces each group of a dataflow block by a call of the function ``make_creator()``
    makes of it (FuseOpsByPattern and MergeCompositeFunctions reuse it with their own)."""

    def __init__(self, mod, group_of, make_creator=None):
        super().__init__(mod)
        self.mod = mod
        self.group_of = group_of
        self.make_creator = make_creator or _FunctionCreator

    def fuses(self, group):
        """Whether ``group`` becomes a function (FuseOps: when it has several bindings)."""
        return group.num_nodes > 1

    def _group(self, var):
        return self.group_of[id(var)].find_root()

    def visit_binding_block(self, block):
        if not isinstance(block, DataflowBlock):
            return super().visit_binding_block(block)
        creators = {}
        for binding in block.bindings:
            group = self._group(binding.var)
            if self.fuses(group):
                creators.setdefault(id(group), self.make_creator()).append(binding)
        deps = self._boundaries(block, creators)
        for creator in creators.values():
            creator.create_function(self.mod)
        with self.builder.binding_scope(is_dataflow=True) as frame:
            for binding in _topo_sort(block.bindings, self._group, deps):
                creator = creators.get(id(self._group(binding.var)))
                if creator is None:
                    self.visit_binding(binding)
                elif creator.function is not None and binding is creator.bindings[-1]:
                    self._emit_group_call(creator, binding.var)
        return DataflowBlock(frame.bindings, block.span)

    def _boundaries(self, block, creators):
        """The groups each group reads from (values, and the symbolic dimensions a
        match_cast defines that a binding's value or struct info uses); values read across
        groups become results."""
        deps, definers = {}, {}
        for binding in block.bindings:
            cur = self._group(binding.var)
            for var in collect_tir_vars([binding.var.struct_info_, binding.value]):
                definer = definers.get(id(var))
                if definer is not None and definer is not cur and \
                        not any(d is definer for d in deps.get(id(cur), ())):
                    deps.setdefault(id(cur), []).append(definer)
            if isinstance(binding, MatchCast):
                for var in definable_tir_vars(binding.struct_info):
                    definers.setdefault(id(var), cur)
            for leaf in _leaves_of(binding.value):
                if not isinstance(leaf, Var) or id(leaf) not in self.group_of:
                    continue
                producer = self._group(leaf)
                if producer is cur:
                    continue
                if any(d is cur for d in deps.get(id(producer), ())):
                    raise ValueError(f"FuseOps: a cycle between the groups of "
                                     f"'{binding.var.name_hint}' and '{leaf.name_hint}'")
                deps.setdefault(id(cur), []).append(producer)
                if id(producer) in creators:
                    creators[id(producer)].append_output(leaf)
        return deps

    def _emit_group_call(self, creator, last_var):
        gvar = self.builder.add_func(creator.function, creator.name)
        call = Call(gvar, [self.visit_expr(a) for a in creator.arguments])
        if len(creator.outputs) == 1:
            out = creator.outputs[0]
            self.set_var_remap(out, self._emit(call, out))
            return
        result = self.builder.emit(call, name_hint="lv")
        for k, var in enumerate(creator.outputs):
            self.set_var_remap(var, self._emit(TupleGetItem(result, k), var))

    def _emit(self, value, like):
        """``value`` bound to a variable named and scoped like ``like``."""
        if isinstance(like, DataflowVar):
            return self.builder.emit(value, name_hint=like.name_hint)
        return self.builder.emit_output(value, name_hint=like.name_hint)


def _topo_sort(bindings, group_of, deps):
    """Bindings ordered so that each group comes after the groups it reads (a depth-first
    post-order over groups, started in the order the bindings name them)."""
    per_group, order = {}, []
    for binding in bindings:
        group = group_of(binding.var)
        if id(group) not in per_group:
            per_group[id(group)] = []
            order.append(group)
        per_group[id(group)].append(binding)
    done, out = set(), []
    for root in order:
        if id(root) in done:
            continue
        done.add(id(root))
        stack = [(root, iter(deps.get(id(root), ())))]
        while stack:
            group, pending = stack[-1]
            for dep in pending:
                if id(dep) not in done:
                    done.add(id(dep))
                    stack.append((dep, iter(deps.get(id(dep), ()))))
                    break
            else:
                stack.pop()
                out.extend(per_group.get(id(group), ()))
    return out


def fuse_ops(mod, fuse_opt_level=1, max_fuse_depth=256):
    """``mod`` with fusable kernel calls grouped into primitive functions (module docstring)."""
    graph = _GraphCreator(mod).build()
    groups = GraphPartitioner(fuse_opt_level, max_fuse_depth).partition(graph)
    if all(g.find_root().num_nodes == 1 for g in groups):
        return mod
    group_of = {id(node.ref): groups[node.index] for node in graph.nodes}
    return rewrite_functions(mod, _OperatorFusor(mod, group_of),
                             select=lambda func: not is_primitive(func))


def FuseOps(fuse_opt_level=-1):  # noqa: N802  (passes are CamelCase factories)
    """A pass grouping fusable kernel calls into primitive functions (module docstring)."""

    def run(mod, ctx):
        level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        depth = int(ctx.config.get(MAX_DEPTH_CONFIG, 256))
        return fuse_ops(mod, level, depth)

    return ModulePass(run, PassInfo(0, "FuseOps"))
