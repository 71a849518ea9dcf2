"""rvm.relax.backend: the pattern table codegens register with (TVM's ``relax.backend``),
and the patterns of the built-in example codegens. This package is a facade."""
from rvm.relax.backend import contrib_patterns as _contrib_patterns  # noqa: F401  (registers)
from rvm.relax.backend.pattern_registry import (
    get_pattern, get_patterns_with_prefix, register_pattern_table, register_patterns,
)

__all__ = ["get_pattern", "get_patterns_with_prefix", "register_pattern_table",
           "register_patterns"]
