"""Parsing ``@R.function`` functions: signatures with symbolic shapes, bindings, dataflow
blocks, ``if``/``else`` and ``return``."""
import ast
import types

from rvm.ir.expr import GlobalVar, PrimExpr, RelaxExpr
from rvm.ir.base import structural_equal
from rvm.relax import expr as _r
from rvm.relax import struct_info as _si
from rvm.relax.binding import BindingBlock, DataflowBlock, MatchCast, SeqExpr, VarBinding
from rvm.relax.function import Function
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars
from rvm.relax.normalizer import Normalizer
from rvm.relax.op.registry import list_op_names
from rvm.tir import expr as _e
from rvm.tir.function import PrimFunc
from rvm.script.parser.core import CONVERTED_ERRORS, Builtin, Namespace, decorator_kind
from rvm.script.parser.diagnostics import ParseError
from rvm.script.parser.metadata import NDARRAY_KEY, decode_array
from rvm.script.parser.relax_builtins import (
    RELAX_TABLE, Marker, MatchCastSpec, as_sinfo, call_packed, operator_builtin, to_relax,
)
from rvm.script.parser.tir_parser import TIRParser
from rvm.script.parser.tir_builtins import TIR_TABLE, VarDecl

_RELAX_BINOPS = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
    ast.FloorDiv: "floor_divide", ast.Pow: "power", ast.Lt: "less", ast.LtE: "less_equal",
    ast.Gt: "greater", ast.GtE: "greater_equal", ast.Eq: "equal", ast.NotEq: "not_equal",
}


class ModuleRef:
    """``cls`` (or the class name) inside a module's function: ``cls.f`` is f's GlobalVar."""

    def __init__(self, ctx):
        self.ctx = ctx


class MetadataRef:
    """``metadata`` in printed text: ``metadata["relax.expr.Constant"][i]`` (a Constant),
    ``metadata["runtime.NDArray"][i]`` (an array, in function attributes)."""

    def __init__(self, table):
        self.table = table
        self.cache = {}

    def lookup(self, key, index):
        """The value of ``name``: scopes, dialect aliases, then the defining module's names."""
        entries = self.table.get(key)
        if entries is None:
            raise KeyError(f"the metadata section has no {key!r} entries; it has "
                           f"{sorted(self.table)}")
        if not 0 <= index < len(entries):
            raise IndexError(f"metadata[{key!r}] has {len(entries)} entries, index {index} is "
                             "out of range")
        if (key, index) not in self.cache:
            value = decode_array(entries[index])
            self.cache[(key, index)] = value if key == NDARRAY_KEY else _r.Constant(value)
        return self.cache[(key, index)]


IR_TABLE = {"GlobalVar": Builtin("GlobalVar", lambda parser, node, name: parser.global_var(
    name, node))}


class RelaxParser(TIRParser):
    """Parses one Relax function from its ``ast.FunctionDef``."""

    tables = {"tir": TIR_TABLE, "relax": RELAX_TABLE, "ir": IR_TABLE}

    def __init__(self, source, env, aliases, ctx):
        super().__init__(source, env, aliases)
        self.ctx = ctx
        self.auto_define = False
        self.expired = {}
        self.attrs = {}
        self.norm = Normalizer(ctx.module, check_global_vars=False)
        if ctx.metadata is not None and not hasattr(ctx, "metadata_ref"):
            ctx.metadata_ref = MetadataRef(ctx.metadata)

    # -- names ---------------------------------------------------------------------------
    def lookup(self, name, node):
        """The value of ``name``: scopes, dialect aliases, then the defining module's names."""
        found, value = self.lookup_local(name)
        if found:
            return value
        if name == "metadata" and name not in self.env:
            ref = getattr(self.ctx, "metadata_ref", None)
            if ref is None:
                raise self.error(node, "metadata[...] needs the metadata section; print the "
                                       "module with script(show_meta=True)")
            return ref
        if self.ctx.class_name is not None and name == self.ctx.class_name:
            return ModuleRef(self.ctx)
        if self.auto_define and name not in self.aliases:
            var = _e.Var(name, "int64")
            self.scopes[1][name] = var
            return var
        return super().lookup(name, node)

    def unknown_name_message(self, name):
        """The error text for an unknown ``name``."""
        if name in self.expired:
            return (f"'{name}' is a DataflowVar of the dataflow block at line "
                    f"{self.expired[name]} and cannot be used after it; list it in R.output(...) "
                    "to use it outside the block")
        return super().unknown_name_message(name)

    def dynamic_builtin(self, dialect, name):
        """A Relax operator of the registry (``R.add``) or its sub-namespace (``R.nn``)."""
        if dialect != "relax":
            return None
        builtin = operator_builtin(name)
        if builtin is None and any(op.startswith(f"relax.{name}.") for op in list_op_names()):
            return Namespace("relax", name)  # R.nn, R.image...
        return builtin

    def attribute(self, value, attr, node):
        """``value.attr``: ``cls.f`` gives the GlobalVar of the module's function ``f``."""
        if isinstance(value, ModuleRef):
            gv = value.ctx.global_vars.get(attr)
            if gv is None:
                raise self.error(node, f"the module has no function '{attr}'; it has "
                                       f"{sorted(value.ctx.global_vars)}")
            return gv
        return super().attribute(value, attr, node)

    def subscript(self, value, node):
        """``value[...]`` for the indexable values of the dialect."""
        if isinstance(value, MetadataRef):
            return _MetadataKey(value, self.eval(node.slice))
        if isinstance(value, _MetadataKey):
            return value.ref.lookup(value.key, self.eval(node.slice))
        if isinstance(value, RelaxExpr):
            index = self.eval(node.slice)
            if not isinstance(index, int):
                raise self.error(node.slice, "tuple indices must be constant ints")
            return _r.TupleGetItem(value, index)
        return super().subscript(value, node)

    def call(self, func, args, kwargs, node):
        """Calls a builtin, a function (``cls.f(x)``, ``I.GlobalVar("f")(x)``), a function-valued
        variable or an ``R.ExternFunc("name")`` (a packed call, as ``R.call_packed`` makes)."""
        if isinstance(func, (GlobalVar, _r.Var)):
            if kwargs:
                raise self.error(node, "calls of Relax functions take positional arguments only")
            call = _r.Call(func, [to_relax(self, a, node) for a in args])
            if isinstance(func, GlobalVar) and isinstance(self.ctx.module.functions.get(
                    self.ctx.module.get_global_var(func.name_hint)
                    if func.name_hint in self.ctx.module else None), PrimFunc):
                # A kernel called directly (after CallTIRRewrite): it returns nothing.
                object.__setattr__(call, "struct_info_", _si.TupleStructInfo([]))
            return call
        if isinstance(func, _r.ExternFunc):  # R.ExternFunc("name")(...): R.call_packed's form
            unknown = set(kwargs) - {"sinfo_args"}
            if unknown:
                raise self.error(node, f"an ExternFunc call takes sinfo_args= only, got "
                                       f"{sorted(unknown)}")
            return call_packed(self, node, func, *args, **kwargs)
        name = _script_name(func)
        if name is not None:  # relax.call_tir(...), relax.op.add(...): the R. builtin it is
            builtin = self.tables["relax"].get(name) or self.dynamic_builtin("relax", name)
            if builtin is not None:
                return super().call(builtin, args, kwargs, node)
        return super().call(func, args, kwargs, node)

    def ir_binop(self, node, op, lhs, rhs):
        """``lhs <op> rhs`` where an operand is IR (dialects define it)."""
        if isinstance(lhs, RelaxExpr) or isinstance(rhs, RelaxExpr):
            name = _RELAX_BINOPS.get(op)
            builtin = operator_builtin(name) if name else None
            if builtin is None:
                raise self.error(node, f"unsupported operator {op.__name__} on Relax values")
            return builtin.fn(self, node, to_relax(self, lhs, node), to_relax(self, rhs, node))
        return super().ir_binop(node, op, lhs, rhs)

    def global_var(self, name, node):
        """``I.GlobalVar("f")``: the module's function ``f``, else a GlobalVar of that name (a
        function printed alone refers to module functions this way)."""
        if not isinstance(name, str):
            raise self.error(node, f"I.GlobalVar expects a function name string, got {name!r}")
        gv = self.ctx.global_vars.get(name)
        if gv is None:
            gv = self.ctx.free_global_vars.setdefault(name, GlobalVar(name))
        return gv

    def add_kernel(self, prim_func, name_hint, node):
        """The GlobalVar of ``prim_func`` added to the module being parsed (R.emit_te); a
        structurally equal kernel already there is reused."""
        if self.ctx.class_name is None:
            raise self.error(node, "R.emit_te adds a kernel to its module, so it needs an "
                                   "@I.ir_module class around the function")
        for name, gv in self.ctx.global_vars.items():
            existing = self.ctx.module.functions.get(gv)
            if isinstance(existing, PrimFunc) and structural_equal(existing, prim_func):
                return gv
        name, suffix = name_hint, 1
        while name in self.ctx.global_vars:
            name, suffix = f"{name_hint}{suffix}", suffix + 1
        gv = GlobalVar(name)
        self.ctx.global_vars[name] = gv
        self.ctx.module.add(gv, prim_func)
        return gv

    # -- symbolic dimensions -------------------------------------------------------------
    def dim(self, value, node):
        """A shape dimension: an int, an int64 expression, or a string such as "n * 2"."""
        if isinstance(value, str):
            try:
                expr = ast.parse(value.strip(), mode="eval").body
            except SyntaxError:
                raise self.error(node, f"bad dimension {value!r}; expected a name or an "
                                       "integer expression such as \"n * 2\"") from None
            outer, self.auto_define = self.auto_define, True
            try:
                value = self.eval(expr)
            except ParseError as err:
                raise self.error(node, f"bad dimension {value!r}: {err.message}") from None
            finally:
                self.auto_define = outer
        if isinstance(value, bool) or not isinstance(value, (int, PrimExpr)):
            raise self.error(node, f"shape dimensions must be ints, names or int64 expressions, "
                                   f"got {value!r}")
        if isinstance(value, PrimExpr) and value.dtype != "int64":
            raise self.error(node, f"symbolic dimensions must be int64, got {value!r} of dtype "
                                   f"{value.dtype}")
        return value

    def sinfo(self, node):
        """The struct info an annotation node denotes."""
        return as_sinfo(self, self.eval(node), node)

    # -- functions -----------------------------------------------------------------------
    def signature(self, fdef):
        """(params, ret struct info or None) from the annotations of ``fdef``."""
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(fdef, "Relax function parameters must be plain 'name: R.Tensor(...)'"
                                   " pairs")
        params = []
        self.auto_define = True
        try:
            for arg in args.args:
                if arg.annotation is None:
                    raise self.error(arg, f"parameter '{arg.arg}' needs a struct info annotation "
                                          "such as R.Tensor((n, 4), \"float32\")")
                params.append(_r.Var(arg.arg, self.sinfo(arg.annotation)))
            ret = self.sinfo(fdef.returns) if fdef.returns is not None else None
        finally:
            self.auto_define = False
        self.check_defined(fdef, params)
        return params, ret

    def check_defined(self, fdef, params):
        """Rejects a symbolic variable that the parameters use but never have as a dimension
        (or R.Prim value) of its own: ``x: R.Tensor(("n * n",))`` alone cannot bind ``n``."""
        defined = set()

        def definers(sinfo):
            if isinstance(sinfo, _si.TensorStructInfo):
                return sinfo.shape_values or ()
            if isinstance(sinfo, _si.ShapeStructInfo):
                return sinfo.values or ()
            if isinstance(sinfo, _si.PrimStructInfo):
                return () if sinfo.value is None else (sinfo.value,)
            if isinstance(sinfo, _si.TupleStructInfo):
                return [d for f in sinfo.fields for d in definers(f)]
            return ()

        for p in params:
            defined.update(id(d) for d in definers(p.struct_info_) if isinstance(d, _e.Var))
        for p, arg in zip(params, fdef.args.args):
            if isinstance(p.struct_info_, _si.FuncStructInfo):
                continue  # a callable's signature has variables of its own
            for var in collect_tir_vars(p.struct_info_):
                if id(var) not in defined:
                    raise self.error(arg.annotation, f"parameter '{p.name_hint}': symbolic "
                                     f"variable '{var.name_hint}' is not defined; a parameter "
                                     f"must have it as a dimension of its own, such as "
                                     f"R.Tensor((\"{var.name_hint}\",), ...)")

    def parse_function(self, fdef, name, private=False, pure=True):
        """The function of ``fdef``; module functions get ``global_symbol`` unless private."""
        self.scopes.append({})
        params, ret = self.signature(fdef)
        for p in params:
            self.define(p.name_hint, p)
        body = self.parse_seq(fdef.body, fdef)
        attrs = dict(self.attrs)
        if not private and "global_symbol" not in attrs:
            attrs["global_symbol"] = name
        func = Function(params, body, ret, is_pure=pure, attrs=attrs or None)
        try:
            func = Normalizer(self.ctx.module, check_global_vars=False).normalize(func)
        except (TypeError, ValueError, IndexError) as err:
            raise self.error(fdef, f"function '{name}': {err}") from None
        merged = merge_binding_blocks(func.body)
        func = func if merged is func.body else func.with_fields(body=merged)
        func.span = self.span(fdef)
        return func

    # -- bodies --------------------------------------------------------------------------
    def parse_seq(self, stmts, owner):
        """A SeqExpr from statements ending in ``return``."""
        for k, node in enumerate(stmts):
            if isinstance(node, ast.Return) and k != len(stmts) - 1:
                raise self.error(stmts[k + 1], "unreachable statement after return")
        last = stmts[-1] if stmts else owner
        if not isinstance(last, ast.Return):
            raise self.error(last, "a Relax function must end with 'return <value>'")
        if last.value is None:
            raise self.error(last, "return needs a value")
        blocks = self.blocks(stmts[:-1])
        return SeqExpr(blocks, self.value(last.value))

    def blocks(self, stmts):
        """The binding blocks of statements: ``with R.dataflow()`` bodies and the bindings
        between them."""
        blocks = []
        current = []
        for node in stmts:
            if isinstance(node, ast.Return):
                raise self.error(node, "return is only allowed at the end of the function")
            if isinstance(node, ast.With):
                if current:
                    blocks.append(BindingBlock(current))
                    current = []
                blocks.append(self.dataflow(node))
                continue
            current.extend(self.statement(node, dataflow=False))
        if current:
            blocks.append(BindingBlock(current))
        return blocks

    def value(self, node):
        """The normalized Relax expression of an ast expression."""
        value = to_relax(self, self.eval(node), node)
        try:
            return self.norm.normalize(value)
        except (TypeError, ValueError, IndexError) as err:
            raise self.error(node, str(err)) from None

    def statement(self, node, dataflow, outputs=()):
        """The bindings of one statement (none for declarations and attributes)."""
        try:
            return self._statement(node, dataflow, outputs)
        except ParseError:
            raise
        except CONVERTED_ERRORS as err:  # an IR constructor rejected what the statement built
            raise self.error(node, str(err)) from None

    def _statement(self, node, dataflow, outputs):
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return []
            value = self.eval(node.value)
            if isinstance(value, Marker):
                return self.marker_statement(value, node, dataflow)
            return [self.bind(node, "_", value, None, dataflow, outputs)]
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self.error(node, "chained assignment is not supported")
            return self.assign(node, node.targets[0], node.value, None, dataflow, outputs)
        if isinstance(node, ast.AnnAssign):
            if node.value is None:
                raise self.error(node, "expected 'name: annotation = value'")
            return self.assign(node, node.target, node.value, node.annotation, dataflow, outputs)
        if isinstance(node, ast.If):
            return [self.if_binding(node, dataflow, outputs)]
        if isinstance(node, ast.Pass):
            return []
        if isinstance(node, ast.FunctionDef):
            return [self.local_function(node, dataflow, outputs)]
        raise self.error(node, f"unsupported statement ({type(node).__name__}) in a Relax "
                               "function; expected an assignment, 'with R.dataflow()', if/else "
                               "or return")

    def local_function(self, node, dataflow, outputs):
        """A local ``@R.function`` bound to its name; it sees the module, not the enclosing
        function's variables."""
        kind, options = decorator_kind(self.ctx.source, node, self.aliases)
        if kind != "function":
            raise self.error(node, f"local function '{node.name}' needs @R.function")
        parser = RelaxParser(self.ctx.source, self.ctx.env, self.ctx.aliases, self.ctx)
        func = parser.parse_function(node, node.name, True, bool(options.get("pure", True)))
        return self.bind(node, node.name, func, None, dataflow, outputs)

    def marker_statement(self, marker, node, dataflow):
        """Handles R.func_attr (and rejects misplaced R.output / R.dataflow)."""
        if marker.kind == "func_attr":
            if len(marker.args) != 1 or not isinstance(marker.args[0], dict):
                raise self.error(node, "R.func_attr expects a dict")
            self.attrs.update(marker.args[0])
            return []
        if marker.kind == "output":
            raise self.error(node, "R.output(...) must be the last statement of a "
                                   "'with R.dataflow()' block")
        raise self.error(node, f"R.{marker.kind}(...) cannot be used as a statement here")

    def assign(self, node, target, value_node, ann_node, dataflow, outputs):
        """The bindings of ``target = value`` (declarations of symbolic variables bind none)."""
        if isinstance(value_node, ast.Name) and isinstance(target, ast.Name) and \
                value_node.id == self.ctx.class_name and ann_node is None:
            self.define(target.id, ModuleRef(self.ctx))  # cls = Module
            return []
        value = self.eval(value_node)
        decls = value if isinstance(value, tuple) else (value,)
        if decls and all(isinstance(v, VarDecl) for v in decls):
            for name, decl in zip(self.target_names(target, len(decls)), decls):
                found, existing = self.lookup_local(name)
                if not (found and isinstance(existing, _e.Var) and existing.dtype == decl.dtype):
                    self.define(name, decl.make(name))
            return []
        name = self.target_names(target, 1)[0]
        return [self.bind(node, name, value, ann_node, dataflow, outputs)]

    def bind(self, node, name, value, ann_node, dataflow, outputs):
        """One VarBinding or MatchCast of ``name`` to ``value``."""
        sinfo = self.sinfo(ann_node) if ann_node is not None else None
        is_output = name in outputs
        var_type = _r.DataflowVar if dataflow and not is_output else _r.Var
        try:
            if isinstance(value, MatchCastSpec):
                normed = self.norm.normalize(value.value)
                var = var_type(name, value.sinfo)
                binding = MatchCast(var, normed, value.sinfo)
            else:
                normed = self.norm.normalize(to_relax(self, value, node))
                var = var_type(name, sinfo if sinfo is not None else normed.struct_info_)
                binding = VarBinding(var, normed)
        except (TypeError, ValueError, IndexError) as err:
            raise self.error(node, str(err)) from None
        self.define(name, var)
        binding.span = self.span(node)
        return binding

    def dataflow(self, node):
        """The DataflowBlock of ``with R.dataflow():``; its R.output names stay visible."""
        if len(node.items) != 1 or node.items[0].optional_vars is not None or \
                not self.is_builtin(node.items[0].context_expr, "relax.dataflow"):
            raise self.error(node, "unsupported 'with'; expected 'with R.dataflow():'")
        body = node.body
        last = body[-1]
        if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                and self.is_builtin(last.value, "relax.output")):
            raise self.error(last, "a dataflow block must end with R.output(...) naming the "
                                   "variables used after it")
        for arg in last.value.args:
            if not isinstance(arg, ast.Name):
                raise self.error(arg, "R.output expects variable names")
        outputs = [a.id for a in last.value.args]
        bindings = []
        with self.scope() as frame:
            for stmt in body[:-1]:
                bindings.extend(self.statement(stmt, dataflow=True, outputs=outputs))
            bound = dict(frame)
        for arg in last.value.args:
            var = bound.get(arg.id)
            if not isinstance(var, _r.Var):
                raise self.error(arg, f"R.output: '{arg.id}' is not bound in this dataflow block")
            self.define(arg.id, var)
        for name, var in bound.items():
            if isinstance(var, _r.DataflowVar):
                self.expired[name] = node.lineno + self.source.first_line - 1
        return DataflowBlock(bindings)

    def if_binding(self, node, dataflow, outputs):
        """The binding of an ``if``/``else`` whose branches assign the same variable."""
        cond = self.value(node.test)
        if not node.orelse:
            raise self.error(node, "an 'if' in a Relax function needs an 'else' branch")
        branches = []
        for stmts in (node.body, node.orelse):
            last = stmts[-1]
            if not isinstance(last, (ast.Assign, ast.AnnAssign)) or isinstance(
                    last, ast.Assign) and len(last.targets) != 1:
                raise self.error(last, "each branch of an 'if' must end by assigning its result "
                                       "to a variable")
            target = last.targets[0] if isinstance(last, ast.Assign) else last.target
            name = self.target_names(target, 1)[0]
            ann = last.annotation if isinstance(last, ast.AnnAssign) else None
            with self.scope():
                blocks = self.blocks(stmts[:-1])
                result = self.value(last.value)
            seq = SeqExpr(blocks, result)
            branches.append((name, ann, seq, last))
        (t_name, t_ann, t_seq, _), (f_name, f_ann, f_seq, f_last) = branches
        if t_name != f_name:
            raise self.error(f_last, f"both branches must assign the same variable; the first "
                                     f"assigns '{t_name}', this one '{f_name}'")
        ann = t_ann if t_ann is not None else f_ann
        sinfo = self.sinfo(ann) if ann is not None else None
        try:
            value = self.norm.normalize(_r.If(cond, t_seq, f_seq))
        except (TypeError, ValueError) as err:
            raise self.error(node, str(err)) from None
        var_type = _r.DataflowVar if dataflow and t_name not in outputs else _r.Var
        var = var_type(t_name, sinfo if sinfo is not None else value.struct_info_)
        self.define(t_name, var)
        return VarBinding(var, value, span=self.span(node))


def merge_binding_blocks(seq):
    """``seq`` with adjacent non-dataflow blocks joined (normalization may bind a nested result
    in a block of its own; the text cannot tell adjacent blocks apart)."""
    if not isinstance(seq, SeqExpr):
        return seq
    blocks = []
    for block in seq.blocks:
        if blocks and type(block) is BindingBlock and type(blocks[-1]) is BindingBlock:
            blocks[-1] = BindingBlock(blocks[-1].bindings + block.bindings)
        else:
            blocks.append(block)
    if len(blocks) == len(seq.blocks):
        return seq
    return SeqExpr(blocks, seq.body)


class _MetadataKey:
    def __init__(self, ref, key):
        self.ref = ref
        self.key = key


def declare_signatures(ctx, fdefs):
    """Gives each Relax function's GlobalVar the struct info of its signature, so calls between
    functions parse in any order."""
    for fdef in fdefs:
        parser = RelaxParser(ctx.source, ctx.env, ctx.aliases, ctx)
        parser.scopes.append({})
        params, ret = parser.signature(fdef)
        ret = ret if ret is not None else _si.ObjectStructInfo()
        ctx.global_vars[fdef.name].struct_info_ = _si.FuncStructInfo(
            [p.struct_info_ for p in params], ret, _declared_purity(parser, fdef))


def _declared_purity(parser, fdef):
    """The ``pure=`` option of ``fdef``'s ``@R.function(...)`` decorator (True when absent)."""
    for deco in fdef.decorator_list:
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "pure":
                    return bool(parser.eval(kw.value))
    return True


_SCRIPT_NAMES = {}
_R_NAMESPACE = []


def register_r_namespace(module):
    """Records the R module (``rvm.script.relax``), which is built on top of this parser and
    calls this once as it is imported, so that ``_script_name`` can name its objects."""
    _R_NAMESPACE[:] = [module]
    _SCRIPT_NAMES.clear()


def _script_name(func):
    """The dotted ``R.`` name (``"call_tir"``, ``"nn.relu"``) of the Python object ``func`` when
    it is one of the R namespace's objects (``relax.call_tir is R.call_tir``), else None."""
    if not callable(func) or isinstance(func, Builtin):
        return None
    if not _SCRIPT_NAMES and _R_NAMESPACE:
        def collect(owner, prefix, depth):
            for attr in dir(owner):
                if attr.startswith("_"):
                    continue
                value = getattr(owner, attr, None)
                if isinstance(value, types.ModuleType):
                    if depth < 1 and value.__name__.startswith("rvm.relax.op"):
                        collect(value, f"{prefix}{attr}.", depth + 1)
                elif callable(value) and not isinstance(value, type):
                    _SCRIPT_NAMES.setdefault(id(value), (value, prefix + attr))

        collect(_R_NAMESPACE[0], "", 0)
    found = _SCRIPT_NAMES.get(id(func))
    return found[1] if found is not None and found[0] is func else None
