"""Input specifications of ``Module.export_tvm`` (TVM's ``nn.spec``).

A module spec maps method names to their inputs::

    {"forward": {"x": nn.spec.Tensor([1, "n"], "float32"), "k": nn.spec.Int()}}

A string dimension is a symbolic int64 dimension (one variable per name in a
method). An optional ``"$"`` entry holds the method's modes:
``{"param_mode": "plain" | "packed" | "none", "effect_mode": "none" | "plain"}``.
"""
import inspect

from rvm.runtime.data_type import DataType

_PARAM_MODES = ("plain", "packed", "none")
_EFFECT_MODES = ("plain", "none")


class Int:
    """An int64 scalar input (a symbolic value inside the function)."""

    def __repr__(self):
        return "int"


class Tensor:
    """A tensor input of ``shape`` (ints and dimension-name strings) and ``dtype``.

    >>> Tensor([1, "n"], "float32")
    Tensor([1, 'n'], 'float32')
    """

    def __init__(self, shape, dtype):
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"nn.spec.Tensor: shape must be a list or tuple, got "
                            f"{type(shape).__name__}")
        for dim in shape:
            if isinstance(dim, bool) or not isinstance(dim, (int, str)):
                raise TypeError(f"nn.spec.Tensor: a dimension must be an int or a str, got "
                                f"{dim!r}")
            if isinstance(dim, int) and dim < 0:
                raise ValueError(f"nn.spec.Tensor: dimensions must be non-negative, got {dim}")
        if not isinstance(dtype, str):
            raise TypeError(f"nn.spec.Tensor: dtype must be a str, got {type(dtype).__name__}")
        try:
            DataType(dtype)
        except (TypeError, ValueError) as err:
            raise ValueError(f"nn.spec.Tensor: {err}") from None
        self.shape = list(shape)
        self.dtype = dtype

    def __repr__(self):
        return f"Tensor({self.shape!r}, {self.dtype!r})"


class MethodSpec:
    """The inputs of one method: names in the method's parameter order, their specs, and the
    parameter/effect modes."""

    def __init__(self, method, arg_names, arg_specs, param_mode="plain", effect_mode="plain"):
        self.method = method
        self.arg_names = list(arg_names)
        self.arg_specs = list(arg_specs)
        self.param_mode = param_mode
        self.effect_mode = effect_mode

    @staticmethod
    def from_raw(spec, method, method_name="method"):
        """The MethodSpec of ``method`` from a dict {argument name: spec} (plus ``"$"``)."""
        if not isinstance(spec, dict):
            raise TypeError(f"export spec of '{method_name}': expected a dict from argument "
                            f"name to nn.spec.Tensor/Int, got {type(spec).__name__}")
        spec = dict(spec)
        modes = spec.pop("$", {})
        param_mode = modes.get("param_mode", "plain")
        effect_mode = modes.get("effect_mode", "plain")
        if param_mode not in _PARAM_MODES:
            raise ValueError(f"export spec of '{method_name}': param_mode must be one of "
                             f"{list(_PARAM_MODES)}, got {param_mode!r}")
        if effect_mode not in _EFFECT_MODES:
            raise ValueError(f"export spec of '{method_name}': effect_mode must be one of "
                             f"{list(_EFFECT_MODES)}, got {effect_mode!r}")
        params = [p for p in inspect.signature(method).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        arg_names = [p.name for p in params]
        missing = [n for n in arg_names if n not in spec]
        extra = [n for n in spec if n not in arg_names]
        if missing or extra:
            raise ValueError(f"export spec of '{method_name}': the method takes {arg_names}; "
                             f"spec lacks {missing} and has unknown {extra}")
        for name in arg_names:
            if not isinstance(spec[name], (Tensor, Int)):
                raise TypeError(f"export spec of '{method_name}': argument '{name}' must be "
                                f"an nn.spec.Tensor or nn.spec.Int, got "
                                f"{type(spec[name]).__name__}")
        return MethodSpec(method, arg_names, [spec[n] for n in arg_names], param_mode,
                          effect_mode)


class ModuleSpec:
    """The methods of a module to export, in the spec's order."""

    def __init__(self, module, method_names, method_specs):
        self.module = module
        self.method_names = list(method_names)
        self.method_specs = list(method_specs)

    @staticmethod
    def from_raw(spec, module):
        """The ModuleSpec of ``module`` from {method name: {argument name: spec}}."""
        if not isinstance(spec, dict) or not spec:
            raise TypeError("export_tvm: spec must be a non-empty dict from method name to "
                            "{argument name: nn.spec.Tensor/Int}, got "
                            f"{spec!r}")
        names, specs = [], []
        for name, method_spec in spec.items():
            method = getattr(module, name, None)
            if not isinstance(name, str) or not callable(method):
                raise ValueError(f"export_tvm: {type(module).__name__} has no method {name!r}")
            names.append(name)
            specs.append(MethodSpec.from_raw(method_spec, method, name))
        return ModuleSpec(module, names, specs)
