"""Parse errors that point at the source: file:line:column, the line itself and a caret."""
import ast

from rvm.support.errors import DiagnosticError


class ParseError(DiagnosticError, SyntaxError):
    """A malformed script program.

    The message names the file, line and column, quotes the source line with a
    caret under the offending part, and says what was expected.

    >>> err = ParseError("expected a buffer", "m.py", 3, 5, "    A = B", 4)
    >>> print(err)
    m.py:3:5: expected a buffer
        A = B
        ^^^^
    """

    def __init__(self, message, filename, line, column, source_line="", width=1):
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.width = max(1, width)
        text = f"{filename}:{line}:{column}: {message}"
        if source_line:
            caret = " " * (column - 1) + "^" * self.width
            text += f"\n{source_line.rstrip()}\n{caret}"
        super().__init__(text)
        # SyntaxError fields, so tools that understand them show the location too.
        self.msg = message
        self.lineno = line
        self.offset = column
        self.text = source_line

    def __str__(self):
        return self.args[0]


class Source:
    """Program text plus where it came from: file name and the line/column of its first line."""

    def __init__(self, text, filename="<string>", first_line=1, indent=0):
        self.text = text
        self.filename = filename
        self.first_line = first_line
        self.indent = indent
        self.lines = text.splitlines()
        self.tree = None

    def parse(self):
        """The ast of the text (a Python syntax error becomes a ParseError)."""
        if self.tree is None:
            try:
                self.tree = ast.parse(self.text, filename=self.filename)
            except SyntaxError as err:
                line = (err.lineno or 1)
                col = (err.offset or 1)
                raise self.error_at(line, col, 1, f"invalid Python syntax: {err.msg}") from None
        return self.tree

    def error_at(self, line, column, width, message):
        """A ParseError at a 1-based line and column of the text."""
        source_line = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if self.indent:
            source_line = " " * self.indent + source_line
        return ParseError(message, self.filename, line + self.first_line - 1,
                          column + self.indent, source_line, width)

    def error(self, node, message):
        """A ParseError pointing at ``node`` (an ast node, or None for the first line)."""
        if node is None or not hasattr(node, "lineno"):
            return self.error_at(1, 1, 1, message)
        line = node.lineno
        col = node.col_offset + 1
        end_line = getattr(node, "end_lineno", line)
        end_col = getattr(node, "end_col_offset", None)
        if end_line == line and end_col is not None:
            width = end_col - node.col_offset
        else:
            width = max(1, len(self.lines[line - 1]) - node.col_offset if line <= len(self.lines)
                        else 1)
        return self.error_at(line, col, width, message)
