"""BindParams: replace parameters of a Relax function by constants.

``BindParams("main", {"w0": array, ...})`` removes the named parameters from
``main``'s signature and uses the arrays (numpy arrays or NDArrays) as
``relax.Constant``s in their place. Symbolic dimensions that a bound
parameter defines (``n`` in ``R.Tensor((n, m))``) take the constant's
dimensions everywhere in the function, so ``x: R.Tensor((1, m))`` becomes
``R.Tensor((1, 784))`` once ``w0`` is bound to a 128x784 array.
"""
import numpy as np

from rvm.relax.analysis.struct_info_analysis import bind_symbolic_vars
from rvm.relax.expr import Constant, Var, const
from rvm.relax.function import Function
from rvm.relax.struct_info import TensorStructInfo
from rvm.runtime.ndarray import NDArray
from rvm.relax.transform.function_pass import replace_functions
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.transform.symbolic import SymbolicBinder, substitute_struct_info
from rvm.relax.transform.sinfo_text import sinfo_text


def _as_constant(value, who):
    if isinstance(value, Constant):
        return value
    if isinstance(value, NDArray):
        return Constant(value)
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return const(np.asarray(value))
    raise TypeError(f"{who}: expected an NDArray, a numpy array or a relax Constant, got "
                    f"{type(value).__name__}")


def _check_fits(param, constant, mapping, func_name):
    sinfo = substitute_struct_info(param.struct_info_, mapping)
    data = constant.data
    expected = sinfo_text(param.struct_info_)
    actual = f"{data.dtype}{list(data.shape)}"
    if not isinstance(sinfo, TensorStructInfo):
        raise ValueError(f"BindParams: {func_name}: parameter '{param.name_hint}' is not a "
                         f"tensor ({sinfo!r}); only tensor parameters can be bound")
    bad = (sinfo.dtype is not None and sinfo.dtype != data.dtype) or (
        sinfo.ndim != -1 and sinfo.ndim != len(data.shape))
    values = sinfo.shape_values
    if not bad and values is not None:
        for dim, actual_dim in zip(values, data.shape):
            if getattr(dim, "value", actual_dim) != actual_dim:
                bad = True
    if bad:
        raise ValueError(f"BindParams: {func_name}: parameter '{param.name_hint}' expects "
                         f"{expected}, got {actual}")


def bind_params(func, params, func_name="function"):
    """``func`` with the parameters named in ``params`` (name or Var -> array) bound."""
    by_name = {}
    for key, value in params.items():
        name = key.name_hint if isinstance(key, Var) else key
        if not isinstance(name, str):
            raise TypeError(f"BindParams: parameter keys must be names or relax Vars, got "
                            f"{type(key).__name__}")
        by_name[name] = _as_constant(value, f"BindParams: parameter '{name}'")
    names = [p.name_hint for p in func.params]
    for name in by_name:
        if names.count(name) == 0:
            raise ValueError(f"BindParams: {func_name} has no parameter '{name}'; its "
                             f"parameters are {names}")
        if names.count(name) > 1:
            raise ValueError(f"BindParams: {func_name} has several parameters named '{name}'; "
                             "bind them by Var instead")
    mapping = {}
    bound = [(p, by_name[p.name_hint]) for p in func.params if p.name_hint in by_name]
    for param, constant in bound:
        bind_symbolic_vars(param.struct_info_, constant.struct_info_, mapping)
    for param, constant in bound:
        _check_fits(param, constant, mapping, func_name)
    binder = SymbolicBinder(mapping)
    for param, constant in bound:
        binder.set_var_remap(param, constant)
    kept = [p for p in func.params if p.name_hint not in by_name]
    return binder.bind_function(func, kept)


def BindParams(func_name, params):  # noqa: N802  (passes are CamelCase factories)
    """A pass binding ``params`` (parameter name -> NDArray or numpy array) of the Relax
    function ``func_name`` as constants; see the module docstring.

    >>> from rvm.relax.block_builder import BlockBuilder
    >>> from rvm.relax.op.binary import add
    >>> x = Var("x", TensorStructInfo((2,), "float32"))
    >>> w = Var("w", TensorStructInfo((2,), "float32"))
    >>> bb = BlockBuilder()
    >>> with bb.function("main", [x, w]):
    ...     gv = bb.emit_func_output(bb.emit(add(x, w)))
    >>> mod = BindParams("main", {"w": np.ones(2, "float32")})(bb.get())
    >>> [p.name_hint for p in mod["main"].params]
    ['x']
    """
    if not isinstance(params, dict):
        raise TypeError(f"BindParams: params must be a dict, got {type(params).__name__}")

    def transform(mod, ctx):
        gv = mod.get_global_var(func_name)
        func = mod[gv]
        if not isinstance(func, Function):
            raise ValueError(f"BindParams: '{func_name}' is a {type(func).__name__}, "
                             "expected a Relax function")
        if not params:
            return mod
        return replace_functions(mod, {gv: bind_params(func, params, func_name)})

    return ModulePass(transform, PassInfo(0, "BindParams"))
