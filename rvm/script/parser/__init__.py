"""rvm.script.parser: script text to IR.

This package is a facade; the definitions live in its modules (import
them directly: ``rvm.script.parser.entry.from_source``). As in TVM,
``from rvm.script.parser import ir as I, relax as R, tir as T`` gives the
same namespaces as ``rvm.script``.
"""
