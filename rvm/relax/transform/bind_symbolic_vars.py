"""BindSymbolicVars: specialize a Relax function to concrete values of its symbolic shapes.

``BindSymbolicVars({"n": 8})`` replaces the symbolic variable ``n`` of a
function's parameters (``x: R.Tensor((n, 784))``) by 8 everywhere in the
function, so the kernels the build makes from it have static shapes. Keys are
variable names or the ``tir.Var`` objects themselves (a model imported with a
symbolic batch names it as the importer chose: take it from the parameter's
struct info); values are non-negative integers. Tuning needs this: a kernel
is measured on concrete inputs, so ``tune_relax`` only tunes kernels whose
shapes are all known.

>>> from rvm.relax.block_builder import BlockBuilder
>>> from rvm.relax.expr import Var
>>> from rvm.relax.op.binary import add
>>> from rvm.relax.struct_info import TensorStructInfo
>>> x = Var("x", TensorStructInfo((TirVar("n", "int64"), 4), "float32"))
>>> bb = BlockBuilder()
>>> with bb.function("main", [x]):
...     gv = bb.emit_func_output(bb.emit(add(x, x)))
>>> bound = BindSymbolicVars({"n": 8})(bb.get())
>>> bound["main"].params[0].struct_info_.shape_values[0].value
8
"""
from rvm.relax.analysis.struct_info_analysis import collect_tir_vars
from rvm.relax.function import Function
from rvm.relax.transform.function_pass import replace_functions
from rvm.relax.transform.symbolic import SymbolicBinder
from rvm.ir.transform import ModulePass, PassInfo
from rvm.tir.expr import IntImm
from rvm.tir.expr import Var as TirVar


def _symbolic_vars(func):
    """The TIR variables of ``func``'s parameters, in order, each once."""
    return collect_tir_vars([p.struct_info_ for p in func.params])


def _mapping(func, binding_map, func_name):
    """{id(var): IntImm} for the keys of ``binding_map`` that ``func`` has, and the keys used."""
    found = _symbolic_vars(func)
    mapping, used = {}, set()
    for key, value in binding_map.items():
        if isinstance(key, TirVar):
            matches = [v for v in found if v is key]
        else:
            matches = [v for v in found if v.name_hint == key]
            if len({id(v) for v in matches}) > 1:
                raise ValueError(f"BindSymbolicVars: {func_name} has several symbolic variables "
                                 f"named '{key}'; bind them by tir.Var instead")
        for var in matches:
            mapping[id(var)] = IntImm(var.dtype, value)
            used.add(id(key) if isinstance(key, TirVar) else key)
    return mapping, used


def _check_value(key, value):
    name = key.name_hint if isinstance(key, TirVar) else key
    if not isinstance(key, (str, TirVar)):
        raise TypeError(f"BindSymbolicVars: keys must be names or tir.Vars, got "
                        f"{type(key).__name__}")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"BindSymbolicVars: '{name}' must be bound to a non-negative int, got "
                         f"{value!r}")


def BindSymbolicVars(binding_map, func_name=None):  # noqa: N802  (passes are CamelCase)
    """A pass binding the symbolic variables of ``binding_map`` (name or tir.Var -> int) in
    the Relax function ``func_name`` (every Relax function when None); see the module
    docstring. A key that no function's parameters have is an error naming the ones they
    have."""
    if not isinstance(binding_map, dict):
        raise TypeError(f"BindSymbolicVars: binding_map must be a dict, got "
                        f"{type(binding_map).__name__}")
    for key, value in binding_map.items():
        _check_value(key, value)

    def transform(mod, ctx):
        if func_name is None:
            targets = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, Function)]
        else:
            gv = mod.get_global_var(func_name)
            if not isinstance(mod[gv], Function):
                raise ValueError(f"BindSymbolicVars: '{func_name}' is a "
                                 f"{type(mod[gv]).__name__}, expected a Relax function")
            targets = [(gv, mod[gv])]
        changed, used, names = {}, set(), []
        for gv, func in targets:
            mapping, func_used = _mapping(func, binding_map, gv.name_hint)
            used |= func_used
            names += [v.name_hint for v in _symbolic_vars(func) if v.name_hint not in names]
            if mapping:
                changed[gv] = SymbolicBinder(mapping, mod).bind_function(func, func.params)
        unused = [k.name_hint if isinstance(k, TirVar) else k for k in binding_map
                  if (id(k) if isinstance(k, TirVar) else k) not in used]
        if unused:
            where = f"'{func_name}'" if func_name else "the module's Relax functions"
            raise ValueError(f"BindSymbolicVars: no symbolic variable {unused} in the "
                             f"parameters of {where}; they have {names or 'none'}")
        return replace_functions(mod, changed)

    return ModulePass(transform, PassInfo(0, "BindSymbolicVars"))
