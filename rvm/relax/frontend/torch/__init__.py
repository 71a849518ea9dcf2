"""``rvm.relax.frontend.torch`` is ``rvm.frontend.torch`` (``from_fx``,
``from_exported_program``), TVM's path to the PyTorch importers; this facade replaces
itself with that package when first imported."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("rvm.frontend.torch")
