"""rvm.tir.analysis: facts about TIR (free variables, block access regions, well-formedness).

This package is a facade; the definitions live in its modules.
"""
from rvm.tir.analysis.block_access import get_block_read_write_region
from rvm.tir.analysis.free_vars import free_vars, undefined_vars
from rvm.tir.analysis.verify import verify_well_formed

__all__ = ["free_vars", "get_block_read_write_region", "undefined_vars", "verify_well_formed"]
