"""rvm.relax.analysis: queries on Relax IR. This package is a facade."""
from rvm.relax.analysis.struct_info_analysis import (
    collect_tir_vars,
    definable_tir_vars,
    derive_call_ret_struct_info,
    erase_to_well_defined,
    struct_info_lca,
)
from rvm.relax.analysis.compile_time import computable_at_compile_time, contains_impure_call
from rvm.relax.analysis.reshape_pattern import has_reshape_pattern
from rvm.relax.ty import get_static_type
from rvm.relax.analysis.well_formed import well_formed, well_formed_errors
from rvm.relax.analysis.var_analysis import (
    all_global_vars, all_vars, bound_vars, free_vars, get_var2val, used_vars,
)

__all__ = [
    "all_global_vars", "all_vars", "bound_vars", "free_vars", "get_var2val", "used_vars",
    "collect_tir_vars", "computable_at_compile_time", "contains_impure_call", "definable_tir_vars", "derive_call_ret_struct_info",
    "erase_to_well_defined", "get_static_type", "has_reshape_pattern", "struct_info_lca", "well_formed", "well_formed_errors",
]
