"""Bring-your-own-codegen examples: ``relax.ext.ccompiler`` (C source) and
``relax.ext.examplejson`` (a graph text run by its own runtime module), registered on import."""
from rvm.codegen.byoc import ccompiler as _ccompiler  # noqa: F401  (registers relax.ext.ccompiler)
from rvm.codegen.byoc import examplejson as _examplejson  # noqa: F401  (relax.ext.examplejson)
