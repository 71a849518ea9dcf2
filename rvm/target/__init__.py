"""rvm.target: compilation targets (``rvm.target.Target("llvm --num-cores=4")``).

This package is a facade; the definitions live in its modules.
"""
from rvm.target.target import KINDS, Target, TargetKind, as_target

__all__ = ["KINDS", "Target", "TargetKind", "as_target"]
