"""rvm.relax.frontend: TVM's path to the importers of ``rvm.frontend``
(``from rvm.relax.frontend.torch import from_fx``) and ``detach_params``.

This package is a facade; ``rvm.relax.frontend.torch`` loads the PyTorch importers
on first use.
"""
from rvm.frontend.common import detach_params

__all__ = ["detach_params"]
