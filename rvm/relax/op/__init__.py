"""rvm.relax.op: Relax operators. This package is a facade; the definitions live in its modules."""
from rvm.relax.op.base import call_dps_packed, call_packed, call_pure_packed, call_tir
from rvm.relax.op.registry import Op, list_op_names, register_op
