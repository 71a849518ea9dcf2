"""Normalizing operator attributes in the Python builders: ints, int tuples, axes, dtypes.

Builders accept what TVM's do (an int where a pair is expected, lists or
tuples) and store one canonical form, so a printed call parses back to an
equal one. Wrong types raise TypeError naming the operator and attribute.
"""
import operator

from rvm.ir.expr import PrimExpr
from rvm.runtime.data_type import DataType


def int_attr(value, op_name, attr):
    """``value`` as an int (TypeError naming the attribute otherwise)."""
    if isinstance(value, bool):
        raise TypeError(f"{op_name}: '{attr}' must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op_name}: '{attr}' must be an int, got {value!r} "
                        f"({type(value).__name__})") from None


def _sequence(value, op_name, attr, what):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{op_name}: '{attr}' must be {what}, got {value!r}")
    return list(value)


def axes_attr(value, op_name, attr):
    """None, or a tuple of ints from an int or a sequence of ints."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    items = _sequence(value, op_name, attr, "an int or a list of ints")
    return tuple(int_attr(v, op_name, attr) for v in items)


def int_tuple_attr(value, op_name, attr, lengths, expand=None):
    """A tuple of ints of one of ``lengths``, from an int or a sequence; ``expand`` maps a
    given length to the stored one (``{1: 2}`` repeats a single value, and an int counts as
    length 1)."""
    items = [value] if isinstance(value, int) and not isinstance(value, bool) else \
        _sequence(value, op_name, attr, f"an int or a list of {' or '.join(map(str, lengths))} "
                                        "ints")
    items = [int_attr(v, op_name, attr) for v in items]
    if len(items) not in lengths:
        raise ValueError(f"{op_name}: '{attr}' expects {' or '.join(map(str, lengths))} "
                         f"values, got {len(items)}: {items}")
    return tuple(expand(items) if expand else items)


def dims_attr(value, op_name, attr):
    """A tuple of ints or PrimExprs (slice bounds that may be symbolic)."""
    items = _sequence(value, op_name, attr, "a list of ints or PrimExprs")
    return tuple(v if isinstance(v, PrimExpr) else int_attr(v, op_name, attr) for v in items)


def dtype_attr(value, op_name, attr="dtype"):
    """None, or ``value`` as a DataType ("void" and "" mean None, as in TVM)."""
    if value is None or (isinstance(value, str) and value in ("", "void")):
        return None
    try:
        return DataType(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{op_name}: '{attr}' must be a dtype, got {value!r} ({err})") from None


def float_attr(value, op_name, attr):
    """``value`` as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op_name}: '{attr}' must be a number, got {value!r}")
    return float(value)


def bool_attr(value, op_name, attr):
    """``value`` as a bool (ints 0/1 allowed)."""
    if value in (True, False):
        return bool(value)
    raise TypeError(f"{op_name}: '{attr}' must be a bool, got {value!r}")


def str_attr(value, op_name, attr, choices=None, optional=False):
    """``value`` as a str (one of ``choices`` when given; None allowed when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{op_name}: '{attr}' must be a str, got {value!r}")
    if choices is not None and value not in choices:
        raise ValueError(f"{op_name}: '{attr}' expects one of {', '.join(map(repr, choices))}, "
                         f"got {value!r}")
    return value
