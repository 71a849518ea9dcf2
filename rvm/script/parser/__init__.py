"""rvm.script.parser: script text to IR.

This package is a facade; the definitions live in its modules (import
them directly: ``rvm.script.parser.entry.from_source``).
"""
