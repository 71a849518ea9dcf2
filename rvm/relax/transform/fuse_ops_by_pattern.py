"""FuseOpsByPattern: the subgraphs that dataflow patterns match become composite functions.

For each pattern in order (earlier patterns take precedence), every binding
of a dataflow block whose value the pattern matches at its root, seeing
through the variables bound in the same block, gives a match: the bindings
the pattern's call and tuple patterns matched. A match is kept when none of
its bindings is taken already, no intermediate value is used outside it, and
the pattern's ``check(context)`` (if any) accepts it. Each match becomes a
private function with the attributes ``Composite`` (the pattern's name,
``"<compiler>.<pattern>"``) and ``Primitive``, named ``fused_`` + its
operators (``fused_relax_add_relax_subtract``), called where its root was.
Its parameters are the values it reads from outside; constants stay inside
with ``bind_constants=True`` and become parameters otherwise.

With ``annotate_codegen=True`` each composite function is wrapped in a
public function carrying ``Codegen`` (the pattern's prefix) that binds the
composite function locally and calls it, ready for RunCodegen without
MergeCompositeFunctions.
"""
from rvm.relax.analysis.var_analysis import get_var2val
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.dpl.fusion_pattern import FusionPattern, PatternCheckContext
from rvm.relax.dpl.pattern import (
    CallPattern, TupleGetItemPattern, TuplePattern, match_by_id,
)
from rvm.relax.expr import Call, Constant, Var
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.transform.function_pass import rewrite_functions
from rvm.relax.transform.fuse_ops import PRIMITIVE, _FunctionCreator, _OperatorFusor
from rvm.relax.transform.graph_partitioner import OPAQUE, Group
from rvm.ir.transform import ModulePass, PassInfo

COMPOSITE = "Composite"
CODEGEN = "Codegen"
_BOUND_PATTERNS = (CallPattern, TupleGetItemPattern, TuplePattern)


def is_offload_function(func):
    """Whether ``func`` was made for a codegen (``Primitive``, ``Composite`` or ``Codegen``)."""
    return isinstance(func, Function) and any(
        func.get_attr(key) for key in (PRIMITIVE, COMPOSITE, CODEGEN))


class _GroupMap(dict):
    """{id(var): Group}; a variable no match took is a group of its own."""

    def __missing__(self, key):
        group = self[key] = Group(OPAQUE, None)
        return group


class _Usages(ExprVisitor):
    """{id(var): [variables of the bindings using it]} ("" for the function result)."""

    def __init__(self):
        self.users = {}
        self._current = ""

    def visit_var_binding_(self, binding):
        self._current = binding.var
        self.visit_expr(binding.value)
        self._current = ""

    def visit_match_cast_(self, binding):
        self.visit_var_binding_(binding)

    def visit_var_(self, var):
        self.users.setdefault(id(var), []).append(self._current)


def _matched_bindings(matches, root_binding, bound):
    """The bindings the call/tuple sub-patterns matched (root first), or None when the match
    reaches outside ``bound`` (the block's {id(value): binding})."""
    out = {id(root_binding): root_binding}
    for pattern, expr in matches.items():
        if not isinstance(pattern, _BOUND_PATTERNS) or expr is root_binding.value:
            continue
        binding = bound.get(id(expr))
        if binding is None:
            return None
        out[id(binding)] = binding
    return out


class _Partitioner:
    """Finds the matches of the patterns in one function; fills ``group_of``/``pattern_of``."""

    def __init__(self, func, group_of, pattern_of):
        self.func = func
        self.group_of = group_of
        self.pattern_of = pattern_of
        self.var2val = get_var2val(func)
        self.var2val_by_id = {id(k): v for k, v in self.var2val.items()}
        usages = _Usages()
        usages.visit_expr(func)
        self.users = usages.users
        self.value_to_bound_var = {id(v): k for k, v in self.var2val.items()}

    def run(self, pattern):
        blocks = []

        class _Blocks(ExprVisitor):
            def visit_dataflow_block_(self, block):
                blocks.append(block)
                self.visit_binding_block_(block)

        _Blocks().visit_expr(self.func)
        for block in blocks:
            bound = {id(b.value): b for b in block.bindings if isinstance(b, VarBinding)}
            local = {id(b.var): b for b in block.bindings}
            for binding in block.bindings:
                if isinstance(binding, VarBinding) and isinstance(binding.value, Call):
                    self._try(pattern, binding, bound, local)

    def _try(self, pattern, binding, bound, local):
        if id(binding.var) in self.group_of:
            return
        matches = match_by_id(pattern.pattern, binding.value, self.var2val_by_id)
        if matches is None:
            return
        taken = _matched_bindings(matches, binding, bound)
        if taken is None or any(id(b.var) in self.group_of for b in taken.values()):
            return
        members = {id(b.var) for b in taken.values()}
        for b in taken.values():
            if b is binding:
                continue
            users = self.users.get(id(b.var), [])
            if any(u == "" or id(u) not in members for u in users):
                return  # an intermediate value used outside: the match would need two results
        if pattern.check is not None:
            annotated = {}
            for name, sub in pattern.annotation_patterns.items():
                for pat, expr in matches.items():
                    if pat is sub:
                        annotated[name] = expr
            context = PatternCheckContext(
                binding.value, annotated, {b.var: b.value for b in taken.values()},
                self._usage_map(),
                self.value_to_bound_var)
            if not pattern.check(context):
                return
        group = Group(OPAQUE, binding.var)
        for b in taken.values():
            if b is not binding:
                member = Group(OPAQUE, b.var)
                member.parent = group
                self.group_of[id(b.var)] = member
        group.num_nodes = len(taken)
        self.group_of[id(binding.var)] = group
        self.pattern_of[id(group)] = pattern

    def _usage_map(self):
        by_id = {id(k): k for k in self.var2val}
        for param in self.func.params:
            by_id[id(param)] = param
        return {by_id[k]: [u for u in users if u != ""]
                for k, users in self.users.items() if k in by_id}


def _op_label(call):
    op = call.op
    if isinstance(op, Op):
        return op.name.replace(".", "_")
    return getattr(op, "name_hint", "call")


class _CompositeCreator(_FunctionCreator):
    """A composite function of one match (and, with annotate_codegen, its Codegen wrapper)."""

    def __init__(self, fusor):
        super().__init__()
        self.fusor = fusor
        self.labels = []

    def append(self, binding):
        if isinstance(binding.value, Call):
            self.labels.append(_op_label(binding.value))
        super().append(binding)

    def _use(self, expr):
        if isinstance(expr, Constant) and self.fusor.bind_constants:
            return  # stays in the function
        super()._use(expr)

    def create_function(self, mod):
        super().create_function(mod)
        if self.function is None:
            return
        root = self.bindings[-1].var
        pattern = self.fusor.pattern_of[id(self.fusor.group_of[id(root)].find_root())]
        self.name = self.fusor.unique_name("fused_" + "_".join(self.labels))
        func = self.function
        if not self.fusor.annotate_codegen:
            self.function = _with_attrs(func, {COMPOSITE: pattern.name, PRIMITIVE: True})
            return
        inner = _with_attrs(func, {COMPOSITE: pattern.name})
        self.function = wrap_for_codegen(inner, pattern.name.split(".")[0], self.name)


def _with_attrs(func, attrs):
    return Function(func.params, func.body, func.ret_struct_info, func.is_pure, attrs,
                    func.span)


def wrap_for_codegen(inner, codegen, name):
    """A public function (``Codegen``=``codegen``) binding ``inner`` locally and calling it."""
    params = [Var(p.name_hint, p.struct_info_) for p in inner.params]
    local = Var("local_func", inner.struct_info_)
    out = Var("output", inner.ret_struct_info)
    body = SeqExpr([BindingBlock([
        VarBinding(local, inner), VarBinding(out, Call(local, params))])], out)
    return Function(params, body, inner.ret_struct_info, True,
                    {CODEGEN: codegen, "global_symbol": name})


class _PatternFusor(_OperatorFusor):
    def __init__(self, mod, group_of, pattern_of, bind_constants, annotate_codegen):
        super().__init__(mod, group_of, make_creator=lambda: _CompositeCreator(self))
        self.pattern_of = pattern_of
        self.bind_constants = bind_constants
        self.annotate_codegen = annotate_codegen
        self.used = set()

    def fuses(self, group):
        return id(group) in self.pattern_of

    def unique_name(self, base):
        """``base``, or ``base`` + a number, not naming a function of the module yet."""
        return unique_function_name(self.builder.get(), base, self.used)


def unique_function_name(mod, base, used):
    """``base`` (or ``base`` + a number) unused in ``mod`` and in the set ``used`` (updated)."""
    name, suffix = base, 1
    while name in mod or name in used:
        name, suffix = f"{base}{suffix}", suffix + 1
    used.add(name)
    return name


def fuse_ops_by_pattern(mod, patterns, bind_constants=True, annotate_codegen=False):
    """``mod`` with the matches of ``patterns`` made composite functions (module docstring)."""
    patterns = [FusionPattern.from_tuple(p) for p in patterns]
    group_of, pattern_of = _GroupMap(), {}
    for func in mod.functions.values():
        if isinstance(func, Function) and not is_offload_function(func):
            partitioner = _Partitioner(func, group_of, pattern_of)
            for pattern in patterns:
                partitioner.run(pattern)
    if not pattern_of:
        return mod
    fusor = _PatternFusor(mod, group_of, pattern_of, bind_constants, annotate_codegen)
    return rewrite_functions(mod, fusor, select=lambda f: not is_offload_function(f))


def FuseOpsByPattern(patterns, bind_constants=True, annotate_codegen=False):  # noqa: N802
    """A pass making the matches of ``patterns`` (FusionPatterns or (name, pattern[,
    annotation_patterns[, check]]) tuples) composite functions (module docstring)."""
    patterns = [FusionPattern.from_tuple(p) for p in patterns]

    def run(mod, ctx):
        return fuse_ops_by_pattern(mod, patterns, bind_constants, annotate_codegen)

    return ModulePass(run, PassInfo(0, "FuseOpsByPattern"))
