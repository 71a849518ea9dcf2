"""The TVMScript dialect of the TIR expression printer: names from the printer's scopes,
intrinsic calls the parser reads back, buffer indices and range ends that round-trip."""
from rvm.ir.base import structural_equal
from rvm.tir import expr as _e
from rvm.tir.expr_printer import int_text, quote
from rvm.tir.expr_printer import ExprPrinter as _ScriptSyntax


def _same(a, b):
    return structural_equal(a, b, map_free_vars=False)


class ExprPrinter(_ScriptSyntax):
    """Prints TIR expressions; ``names`` maps variables and buffers to their printed names."""

    def __init__(self, names, on_free_var=None):
        self.names = names
        self.on_free_var = on_free_var

    def var_name(self, var):
        """The printed name of a TIR variable (declaring it when free)."""
        name = self.names.get(var)
        if name is None:
            if self.on_free_var is not None:
                name = self.on_free_var(var)
            if name is None:
                name = var.name_hint
        return name

    def bind_name(self, var):
        return self.names.get(var) or self.names.define(var, var.name_hint)

    def buffer_name(self, buf):
        """The printed name of a buffer."""
        name = self.names.get(buf)
        return name if name is not None else buf.name

    def indices(self, indices, buffer=None):
        """``i, j + 1``: the text inside ``A[...]``; constants of the dimension's dtype print as
        plain ints, which the buffer converts back; others (an int32 0 into an int64
        dimension) name their dtype."""
        dims = buffer.shape if buffer is not None else ()
        parts = []
        for k, index in enumerate(indices):
            if isinstance(index, _e.IntImm) and k < len(dims) and index.dtype == dims[k].dtype \
                    and index.dtype != "bool":
                parts.append(str(index.value))
            elif isinstance(index, _e.IntImm) and index.dtype == "int32" and k < len(dims):
                parts.append(f"T.int32({index.value})")
            else:
                parts.append(self(index))
        return ", ".join(parts) if parts else "()"  # a scalar buffer: A[()]

    def print_Call(self, x):
        op = x.op
        if op in ("tir.call_packed", "tir.call_extern") and x.args:
            return super().print_Call(x)
        name = op[4:] if op.startswith("tir.") else None
        from rvm.script.parser.tir_builtins import INTRINSICS  # the parser reads these back

        from rvm.script.parser.tir_intrinsics import printed_args

        tvm_args = printed_args(x)
        if tvm_args is not None:  # T.tvm_fill_fragment(...), T.ptx_ldmatrix("float16", ...)
            text = [quote(a) if isinstance(a, str) else self(a) for a in tvm_args]
            return f"T.{name}({', '.join(text)})"
        args = [self(a) for a in x.args]
        if name is not None and INTRINSICS.get(name) is not None and \
                INTRINSICS[name](*x.args).dtype == x.dtype:
            return f"T.{name}({', '.join(args)})"
        return f"T.call_intrin({quote(x.dtype)}, {quote(op)}{''.join(', ' + a for a in args)})"

    def range_end(self, begin, extent):
        """The text of ``begin + extent`` such that the parser recovers ``extent`` exactly."""
        if isinstance(begin, _e.IntImm) and isinstance(extent, _e.IntImm):
            if begin.dtype == extent.dtype:
                return int_text(begin.value + extent.value, begin.dtype)
        if isinstance(extent, _e.Sub) and _same(extent.b, begin):
            return self(extent.a)  # the parser computes stop - start, giving this Sub back
        left, lp = self.text(begin)
        right, rp = self.text(extent)
        left = left if lp >= 5 else f"({left})"
        right = right if rp > 5 else f"({right})"
        return f"{left} + {right}"
