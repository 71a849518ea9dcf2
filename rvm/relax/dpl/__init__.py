"""rvm.relax.dpl: the dataflow pattern language (TVM's ``relax.dpl``). This package is a facade."""
from rvm.relax.dpl.pattern import (
    AndPattern, CallPattern, ConstantPattern, DFPattern, ExprPattern, ExternFuncPattern,
    OrPattern, TupleGetItemPattern, TuplePattern, TypePattern, WildcardPattern,
    extract_matched_expr, is_const, is_op, is_tuple, is_tuple_get_item, match, wildcard,
)
from rvm.relax.dpl.rewrite import rewrite_call

__all__ = [
    "AndPattern", "CallPattern", "ConstantPattern", "DFPattern", "ExprPattern",
    "ExternFuncPattern", "OrPattern", "TupleGetItemPattern", "TuplePattern", "TypePattern",
    "WildcardPattern", "extract_matched_expr", "is_const", "is_op", "is_tuple",
    "is_tuple_get_item", "match", "rewrite_call", "wildcard",
]
