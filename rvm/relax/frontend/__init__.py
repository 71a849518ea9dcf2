"""rvm.relax.frontend: importers of models from other frameworks
(``rvm.relax.frontend.torch.from_fx``, ``rvm.relax.frontend.onnx.from_onnx``) and
``detach_params``.

This package is a facade; the importers load when their subpackage is imported.
"""
from rvm.relax.frontend.common import detach_params

__all__ = ["detach_params"]
