"""Export of an ``nn.Module`` to an IRModule (``Module.export_tvm``).

Each exported method becomes a Relax function whose parameters are the
method's inputs followed by the module's parameters (named by their dotted
paths; one tuple ``packed_params`` in ``param_mode="packed"``), with the
``num_input`` attribute; its body is one dataflow block holding what the
method's operators emitted.
"""
from rvm.relax.analysis.var_analysis import free_vars
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Tuple, TupleGetItem, Var
from rvm.relax.frontend.nn import core
from rvm.relax.frontend.nn import spec as _spec
from rvm.relax.struct_info import ShapeStructInfo, TupleStructInfo
from rvm.tir.expr import Var as TirVar


def export(module, raw_spec):
    """(IRModule, [(name, Parameter)]) of ``module`` for ``raw_spec`` (see nn.spec)."""
    spec = _spec.ModuleSpec.from_raw(raw_spec, module)
    builder = BlockBuilder()
    params = []
    for name, method_spec in zip(spec.method_names, spec.method_specs):
        params = list(module.named_parameters())
        _emit_method(builder, name, method_spec, params)
    return builder.finalize(), params


def _emit_method(builder, name, method_spec, params):
    dims = {}  # one symbolic variable per dimension name in this method

    def dim(value):
        if isinstance(value, str):
            return dims.setdefault(value, TirVar(value, "int64"))
        if isinstance(value, TirVar):
            return dims.setdefault(value.name_hint, value)
        return value

    args, inputs = [], []
    for arg_name, arg_spec in zip(method_spec.arg_names, method_spec.arg_specs):
        if isinstance(arg_spec, _spec.Int):
            value = dim(arg_name)
            inputs.append(Var(arg_name, ShapeStructInfo([value])))
        else:
            value = core.tensor_placeholder(arg_name, [dim(d) for d in arg_spec.shape],
                                            arg_spec.dtype)
            inputs.append(value._expr)
        args.append(value)
    param_vars = []
    for param_name, param in params:
        var = core.tensor_placeholder(param_name, [dim(d) for d in param.shape],
                                      param.dtype)._expr
        param_vars.append(var)
        param._expr = var
    if method_spec.param_mode == "packed":
        packed = Var("packed_params", TupleStructInfo([v.struct_info_ for v in param_vars]))
        func_params = inputs + [packed]
    elif method_spec.param_mode == "plain":
        func_params = inputs + param_vars
    else:
        func_params = inputs
    with builder.function(name, params=func_params, attrs={"num_input": len(inputs)}):
        with builder.dataflow():
            if method_spec.param_mode == "packed":
                for i, (param_name, param) in enumerate(params):
                    param._expr = builder.emit(TupleGetItem(packed, i), name_hint=param_name)
            result = _unwrap(method_spec.method(*args), name)
            output = builder.emit_output(result)
        gvar = builder.emit_func_output(output)
    if method_spec.param_mode == "none":
        used = {id(v) for v in free_vars(builder.get()[gvar])}
        named = [param_name for param_name, v in zip((n for n, _ in params), param_vars)
                 if id(v) in used]
        if named:
            raise ValueError(f"export_tvm: method '{name}' uses parameters {named}, but its "
                             "spec says param_mode='none' (parameters are not passed)")


def _unwrap(value, method_name):
    if isinstance(value, core.Tensor):
        return value._expr
    if isinstance(value, (tuple, list)):
        return Tuple([_unwrap(v, method_name) for v in value])
    raise TypeError(f"export_tvm: method '{method_name}' must return an nn.Tensor or a "
                    f"tuple/list of them, got {type(value).__name__}")
