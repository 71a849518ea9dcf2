"""Relax functions: parameters, a SeqExpr body, a return struct info, purity and attributes."""
from rvm.ir.expr import BaseFunc, RelaxExpr
from rvm.relax.expr import DataflowVar, Var
from rvm.relax.struct_info import FuncStructInfo, StructInfo


class Function(BaseFunc):
    """A Relax function.

    ``params`` are Vars whose struct info also defines the symbolic shape
    variables they mention; ``body`` is normally a SeqExpr; ``ret_struct_info``
    defaults to the body's struct info with undefined symbolic variables
    erased. ``is_pure`` says the function has no visible side effects;
    ``attrs`` holds e.g. ``global_symbol``.

    >>> from rvm.relax.binding import SeqExpr
    >>> from rvm.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> f = Function([x], SeqExpr([], x))
    >>> f.ret_struct_info.ndim, f.struct_info.purity
    (1, True)
    """

    _fields = ("params", "body", "ret_struct_info", "is_pure", "attrs")
    _binding_fields = ("params",)

    def __init__(self, params, body, ret_struct_info=None, is_pure=True, attrs=None, span=None):
        params = tuple(params)
        for i, param in enumerate(params):
            if not isinstance(param, Var):
                raise TypeError(f"Function: parameter {i} must be a relax Var, got "
                                f"{type(param).__name__}")
            if isinstance(param, DataflowVar):
                raise TypeError(f"Function: parameter '{param.name_hint}' must be a Var, not a "
                                "DataflowVar")
            if param.struct_info_ is None:
                raise ValueError(f"Function: parameter '{param.name_hint}' has no struct info; "
                                 "expected e.g. relax.Var(name, relax.TensorStructInfo(...))")
        if not isinstance(body, RelaxExpr):
            raise TypeError(f"Function: body must be a Relax expression, got "
                            f"{type(body).__name__}")
        if ret_struct_info is None and body.struct_info_ is not None:
            ret_struct_info = _well_defined_ret(params, body.struct_info_)
        if ret_struct_info is not None and not isinstance(ret_struct_info, StructInfo):
            raise TypeError(f"Function: ret_struct_info must be a StructInfo, got "
                            f"{type(ret_struct_info).__name__}")
        if attrs is not None and not isinstance(attrs, dict):
            raise TypeError(f"Function: attrs must be a dict or None, got {type(attrs).__name__}")
        self.params = params
        self.body = body
        self.ret_struct_info = ret_struct_info
        self.is_pure = bool(is_pure)
        self.attrs = dict(attrs) if attrs else None
        self.span = span
        if ret_struct_info is not None:
            self.struct_info_ = FuncStructInfo([p.struct_info_ for p in params], ret_struct_info,
                                               self.is_pure)

    @property
    def name(self):
        """The ``global_symbol`` attribute, or None."""
        return self.get_attr("global_symbol")


def _well_defined_ret(params, sinfo):
    from rvm.relax.analysis.struct_info_analysis import definable_tir_vars, erase_to_well_defined

    tir_vars = []
    for param in params:
        tir_vars.extend(definable_tir_vars(param.struct_info_))
    return erase_to_well_defined(sinfo, tir_vars, params)
