"""TIR expressions and buffers printed alone with ``verbose_expr=True``: as TVM prints them,
each variable and buffer the expression uses is declared first (``a = T.int32()``,
``A = T.Buffer((128, 128), "float16")``), then the expression."""
from rvm.script.printer.names import NameTable
from rvm.script.printer.tir import print_buffer, var_decl
from rvm.script.printer.tir_expr import ExprPrinter


class _DeclaringPrinter(ExprPrinter):
    """An ExprPrinter that declares free variables and buffers on first use."""

    def __init__(self):
        super().__init__(NameTable(), on_free_var=self._declare_var)
        self.lines = []

    def _declare_var(self, var):
        name = self.names.define(var, var.name_hint)
        self.lines.append(f"{name} = {var_decl(var)}")
        return name

    def buffer_name(self, buf):
        name = self.names.get(buf)
        if name is None:
            name = self.names.define(buf, buf.name)
            self.lines.append(f"{name} = {print_buffer(buf)}")
        return name


def print_tir_fragment(node):
    """The declarations ``node`` needs, then ``node``: a TIR expression or a buffer.

    >>> from rvm.tir.expr import Var
    >>> print(print_tir_fragment(Var("n", "int64") + 1))
    n = T.int64()
    n + T.int64(1)
    """
    printer = _DeclaringPrinter()
    from rvm.tir.buffer import Buffer

    text = printer.buffer_name(node) if isinstance(node, Buffer) else printer(node)
    return "\n".join(printer.lines + [text])
