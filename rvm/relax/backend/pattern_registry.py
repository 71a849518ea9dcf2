"""The pattern table: FusionPatterns registered by name, looked up by codegen prefix.

Codegens register the patterns they support (``"ccompiler.add"``);
``get_patterns_with_prefix("ccompiler")`` gives them to FuseOpsByPattern,
most recently registered first (register larger patterns last so they are
tried first).

>>> from rvm.relax.dpl.pattern import is_op, wildcard
>>> register_patterns([("doc.add", is_op("relax.add")(wildcard(), wildcard()))])
>>> [p.name for p in get_patterns_with_prefix("doc")]
['doc.add']
"""
from rvm.relax.dpl.fusion_pattern import FusionPattern

_TABLE = {}


def register_patterns(patterns):
    """Registers FusionPatterns (or (name, pattern[, annotations[, check]]) tuples)."""
    for value in patterns:
        pattern = FusionPattern.from_tuple(value)
        _TABLE.pop(pattern.name, None)
        _TABLE[pattern.name] = pattern


def register_pattern_table(compiler, table=None):
    """Registers ``table()``'s patterns under ``compiler`` (usable as a decorator).

    Names without the ``"<compiler>."`` prefix get it.
    """
    def register(fn):
        entries = []
        for value in fn():
            pattern = FusionPattern.from_tuple(value)
            if not pattern.name.startswith(compiler + "."):
                pattern.name = f"{compiler}.{pattern.name}"
            entries.append(pattern)
        register_patterns(entries)
        return fn

    return register(table) if table is not None else register


def get_patterns_with_prefix(prefix):
    """The registered patterns whose names start with ``prefix``, newest first."""
    return [p for name, p in reversed(list(_TABLE.items())) if name.startswith(prefix)]


def get_pattern(name):
    """The pattern registered as ``name``, or None."""
    return _TABLE.get(name)
