"""``rvm.relax.transform``: TVM's path to the Relax passes of ``rvm.transform``
(``from rvm.relax.transform import LegalizeOps``), plus the passes TVM keeps there that
our layering places above the transform package (``MetaScheduleApplyDatabase``), loaded
on first use. Names resolve in ``rvm.transform`` when asked, so passes registered there
later are seen here too. Importing it registers FoldConstant's kernel evaluator and the
example codegens RunCodegen calls (``relax.ext.ccompiler``, ``relax.ext.examplejson``).
"""
import importlib

from rvm import transform as _transform
from rvm.codegen import byoc as _byoc  # noqa: F401  (registers relax.ext.ccompiler/examplejson)
from rvm.driver import constant_eval as _constant_eval  # noqa: F401  (FoldConstant's kernels)

_ABOVE = {"MetaScheduleApplyDatabase": "rvm.meta_schedule.apply_database"}


def __getattr__(name):
    if name in _ABOVE:
        return getattr(importlib.import_module(_ABOVE[name]), name)
    return getattr(_transform, name)


def __dir__():
    return sorted(set(dir(_transform)) | set(_ABOVE))
