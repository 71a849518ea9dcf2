"""rvm.tune: another name for rvm.meta_schedule (the same modules, not copies).

``import rvm.tune``, ``from rvm.tune import tune_tir`` and
``import rvm.tune.database`` all give the objects of rvm.meta_schedule.
"""
import importlib
import importlib.abc
import importlib.util
import sys

_PREFIX = __name__ + "."
_TARGET = "rvm.meta_schedule"


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``rvm.tune.X`` to the already-defined ``rvm.meta_schedule.X``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(_PREFIX):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(_TARGET + "." + spec.name[len(_PREFIX):])

    def exec_module(self, module):
        pass


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())
sys.modules[__name__] = importlib.import_module(_TARGET)
