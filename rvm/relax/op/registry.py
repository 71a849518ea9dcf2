"""The operator registry: ``Op`` nodes looked up by name, each with attributes.

Every operator has an ``FInferStructInfo`` attribute (``fn(call, ctx) ->
StructInfo``, where ``ctx`` is the normalizing BlockBuilder or None) and an
``FPurity`` flag. An operator may declare its attributes (``attrs``: name ->
default, or ``REQUIRED``), as TVM's typed Attrs do: a call with an unknown or a
missing required attribute is then rejected before inference, and absent ones
read as their defaults (``attr_value``). Higher layers attach more attributes by name (legalization
rules, for instance) without this package importing them. Adding a
high-level operator is one ``register_op`` call plus its Python constructor.
"""
import difflib

from rvm.ir.op import _OPS, Op

REQUIRED = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()


def register_op(name, infer_struct_info, purity=True, num_inputs=None, description="",
                override=False, attrs=None):
    """Registers the operator ``name`` and returns its ``Op``.

    ``num_inputs`` (when given) and the attribute names of ``attrs`` (when
    given: name -> default value or ``REQUIRED``) are checked before inference
    runs. An existing operator is replaced only with ``override`` (its other
    attributes are kept).

    >>> from rvm.relax.struct_info import ObjectStructInfo
    >>> op = register_op("demo.opaque", lambda call, ctx: ObjectStructInfo(), override=True)
    >>> Op.get("demo.opaque") is op
    True
    """
    if name in _OPS and not override:
        raise ValueError(f"operator '{name}' is already registered; pass override=True to "
                         "replace it")
    op = _OPS.get(name) or Op(name)
    infer = _checked_attrs(name, _checked_arity(name, infer_struct_info, num_inputs), attrs)
    op.set_attr("FInferStructInfo", infer, override=True)
    op.set_attr("attr_defaults", None if attrs is None else dict(attrs), override=True)
    op.set_attr("FPurity", bool(purity), override=True)
    op.set_attr("description", description, override=True)
    _OPS[name] = op
    return op


def _checked_arity(name, infer, num_inputs):
    if num_inputs is None:
        return infer

    def checked(call, ctx):
        if len(call.args) != num_inputs:
            raise ValueError(f"{name} expects {num_inputs} argument(s), got {len(call.args)}")
        return infer(call, ctx)

    return checked


def _checked_attrs(name, infer, attrs):
    if attrs is None:
        return infer

    def checked(call, ctx):
        given = call.attrs or {}
        for key in given:
            if key not in attrs:
                close = difflib.get_close_matches(key, list(attrs), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                known = ", ".join(attrs) if attrs else "none"
                raise ValueError(f"{name}: unknown attribute '{key}'{hint}; its attributes are "
                                 f"{known}")
        for key, default in attrs.items():
            if default is REQUIRED and key not in given:
                raise ValueError(f"{name}: missing the attribute '{key}'")
        return infer(call, ctx)

    return checked


def attr_value(call, key, default=None):
    """The attribute ``key`` of ``call``: its value, else the operator's declared default,
    else ``default``."""
    given = call.attrs or {}
    if key in given:
        return given[key]
    declared = call.op.get_attr("attr_defaults") if isinstance(call.op, Op) else None
    if declared and key in declared and declared[key] is not REQUIRED:
        return declared[key]
    return default


def composite(builder):
    """Marks ``builder`` (a function of ``rvm.relax.op``) as a composite operator: it builds
    calls of other operators (``linear`` is matmul + permute_dims + add), and the script
    parser accepts it as ``R.<name>`` although no ``Op`` of that name exists."""
    builder.composite = True
    return builder


def list_op_names():
    """Sorted names of every registered operator."""
    return sorted(_OPS)
