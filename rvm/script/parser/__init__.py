"""rvm.script.parser: script text to IR. This package is a facade; the definitions live in its
modules."""
from rvm.script.parser.diagnostics import ParseError
from rvm.script.parser.entry import from_source

__all__ = ["ParseError", "from_source"]
