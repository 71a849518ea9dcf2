"""rvm.relax.analysis: queries on Relax IR. This package is a facade."""
from rvm.relax.analysis.struct_info_analysis import (
    collect_tir_vars,
    definable_tir_vars,
    derive_call_ret_struct_info,
    erase_to_well_defined,
    struct_info_lca,
)
from rvm.relax.analysis.well_formed import well_formed, well_formed_errors

__all__ = [
    "collect_tir_vars", "definable_tir_vars", "derive_call_ret_struct_info",
    "erase_to_well_defined", "struct_info_lca", "well_formed", "well_formed_errors",
]
