"""rvm.tir.analysis: facts about TIR (free variables, block access regions, well-formedness).

This package is a facade; the definitions live in its modules.
"""
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.free_vars import free_vars, undefined_vars, used_vars
from rvm.tir.analysis.region import covers, relax_bounds, relax_range, union_ranges
from rvm.tir.analysis.verify import verify_well_formed

__all__ = ["covers", "free_vars", "get_block_read_write_region", "relax_bounds", "relax_range",
           "undefined_vars", "union_ranges", "used_vars", "verify_well_formed"]
