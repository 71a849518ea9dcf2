"""FusionPattern and PatternCheckContext: what FuseOpsByPattern takes and what a check sees.

A FusionPattern names a dataflow pattern (``"<compiler>.<pattern>"``, the
prefix naming the codegen that will take the matched subgraph), the
sub-patterns a check may want by name (``annotation_patterns``), and an
optional ``check(context) -> bool`` that can reject a match.
"""
from rvm.relax.dpl.pattern import DFPattern


class PatternCheckContext:
    """What a FusionPattern's ``check`` sees about one match.

    ``matched_expr``: the root expression; ``annotated_expr``: {name: expression}
    for the annotation patterns; ``matched_bindings``: {variable: value} of the
    bindings the match covers; ``var_usages``: {variable: [variables of the bindings
    using it]} in the function; ``value_to_bound_var``: {id(value): variable}.
    """

    def __init__(self, matched_expr, annotated_expr, matched_bindings, var_usages,
                 value_to_bound_var):
        self.matched_expr = matched_expr
        self.annotated_expr = annotated_expr
        self.matched_bindings = matched_bindings
        self.var_usages = var_usages
        self.value_to_bound_var = value_to_bound_var


class FusionPattern:
    """A named pattern for FuseOpsByPattern.

    ``name`` becomes the ``Composite`` attribute of the functions made from its
    matches; ``annotation_patterns`` maps names to sub-patterns of ``pattern``
    whose matches ``check`` reads from ``context.annotated_expr``.
    """

    def __init__(self, name, pattern, annotation_patterns=None, check=None,
                 attrs_getter=None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"FusionPattern: name must be a non-empty string, got {name!r}")
        if not isinstance(pattern, DFPattern):
            raise TypeError(f"FusionPattern '{name}': pattern must be a DFPattern, got "
                            f"{type(pattern).__name__}")
        annotation_patterns = dict(annotation_patterns or {})
        for key, value in annotation_patterns.items():
            if not isinstance(value, DFPattern):
                raise TypeError(f"FusionPattern '{name}': annotation pattern '{key}' must be a "
                                f"DFPattern, got {type(value).__name__}")
        if check is not None and not callable(check):
            raise TypeError(f"FusionPattern '{name}': check must be callable(context) -> bool")
        self.name = name
        self.pattern = pattern
        self.annotation_patterns = annotation_patterns
        self.check = check
        self.attrs_getter = attrs_getter

    @classmethod
    def from_tuple(cls, value):
        """A FusionPattern from TVM's tuple form (name, pattern[, annotations[, check]])."""
        if isinstance(value, FusionPattern):
            return value
        if not isinstance(value, (tuple, list)) or not 2 <= len(value) <= 4:
            raise TypeError(f"expected a FusionPattern or a tuple (name, pattern[, "
                            f"annotation_patterns[, check]]), got {value!r}")
        return cls(*value)

    def __repr__(self):
        return f"FusionPattern({self.name!r})"
