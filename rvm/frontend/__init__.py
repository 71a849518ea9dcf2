"""rvm.frontend: importers of models from other frameworks (``from_fx``,
``from_exported_program``) and ``detach_params``. TVM's path to them is
``rvm.relax.frontend`` (``rvm.relax.frontend.torch.from_fx``).

This package is a facade; the definitions live in its modules. The frameworks
themselves (torch) are imported when an importer runs.
"""
from rvm.frontend.common import detach_params
from rvm.frontend.torch import GraphImportError, from_exported_program, from_fx

__all__ = ["GraphImportError", "detach_params", "from_exported_program", "from_fx"]
