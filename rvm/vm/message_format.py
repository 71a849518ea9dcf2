"""The restricted formatter of ``R.print`` and ``R.assert_op`` messages.

A message's format string comes from the executable, which may be an untrusted
file, so it is never handed to ``str.format`` (whose fields reach attributes and
items of the values: ``{0.__class__...}``). Allowed fields are positional only:
``{}`` (automatic numbering) or ``{N}`` (manual numbering, not mixed), with an
optional conversion ``!s`` or ``!r`` (``str``/``repr`` of the value, no lookup)
and an optional standard format spec (``{:.3f}``, ``{0:>8}``) without nested
fields and with width and precision at most ``MAX_WIDTH``. Anything else is a
ValueError naming the field.

>>> format_message("x = {} and {:.2f}", [1, 2.5], "print")
'x = 1 and 2.50'
>>> format_message("{0.__class__}", [1], "print")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: print: format field '{0.__class__}' is not allowed: only positional fields ...
"""
import re
import string

MAX_WIDTH = 1000  # width and precision of one field (a larger one would build a huge string)

_SPEC = re.compile(r"(?:[^{}]?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?"
                   r"(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?\Z")
_ALLOWED = ("only positional fields ({} or {N}, optionally with !s, !r and a format spec "
            "such as :.3f) are")


def _field_text(name, conversion, spec):
    return "{" + name + (f"!{conversion}" if conversion else "") + \
        (f":{spec}" if spec else "") + "}"


def _check_spec(who, field, spec):
    match = _SPEC.match(spec)
    if match is None:
        raise ValueError(f"{who}: format field '{field}' has a format spec that is not "
                         f"allowed ('{spec}'): {_ALLOWED}; nested fields are refused")
    for part in ("width", "precision"):
        digits = match.group(part)
        if digits and int(digits) > MAX_WIDTH:
            raise ValueError(f"{who}: format field '{field}' asks for a {part} of {digits}, "
                             f"more than the {MAX_WIDTH} allowed")


def format_message(fmt, values, who):
    """``fmt`` with its fields replaced by ``values`` (a list); ``who`` names the builtin
    in errors (``print``, ``assert_op``)."""
    if not isinstance(fmt, str):
        raise TypeError(f"{who}: the format must be a str, got {type(fmt).__name__}")
    try:
        parts = list(string.Formatter().parse(fmt))
    except ValueError as err:  # an unmatched brace
        raise ValueError(f"{who}: malformed format string {fmt!r:.80}: {err}") from None
    out, auto, manual = [], 0, False
    for literal, name, spec, conversion in parts:
        out.append(literal)
        if name is None:
            continue
        field = _field_text(name, conversion, spec)
        if name and not name.isdigit() or not name.isascii():
            raise ValueError(f"{who}: format field '{field}' is not allowed: {_ALLOWED}; "
                             "attribute and index access are refused")
        if conversion not in (None, "s", "r"):
            raise ValueError(f"{who}: format field '{field}' has conversion "
                             f"'!{conversion}': only !s and !r are allowed")
        if spec:
            _check_spec(who, field, spec)
        if name:
            if auto:
                raise ValueError(f"{who}: format field '{field}' numbers its value while an "
                                 "earlier field did not; use {} everywhere or {N} everywhere")
            manual, index = True, int(name)
        else:
            if manual:
                raise ValueError(f"{who}: format field '{field}' does not number its value "
                                 "while an earlier field did; use {} everywhere or {N} "
                                 "everywhere")
            index, auto = auto, auto + 1
        if index >= len(values):
            raise ValueError(f"{who}: format field '{field}' refers to value {index}, but "
                             f"{len(values)} value(s) were given")
        value = values[index]
        if conversion == "s":
            value = str(value)
        elif conversion == "r":
            value = repr(value)
        try:
            out.append(format(value, spec))
        except (TypeError, ValueError) as err:
            raise ValueError(f"{who}: format field '{field}' cannot format a "
                             f"{type(value).__name__}: {err}") from None
    return "".join(out)
