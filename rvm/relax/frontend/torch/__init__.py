"""rvm.relax.frontend.torch: PyTorch importers (``from_fx``, ``from_exported_program``).

This package is a facade; the definitions live in its modules. torch itself is
imported when an importer runs, so this package loads without it.
"""
from rvm.relax.frontend.torch.exported_program_translator import from_exported_program
from rvm.relax.frontend.torch.fx_translator import from_fx
from rvm.relax.frontend.torch.importer import GraphImportError

__all__ = ["GraphImportError", "from_exported_program", "from_fx"]
