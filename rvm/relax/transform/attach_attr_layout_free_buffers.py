"""AttachAttrLayoutFreeBuffers: mark the kernel inputs that are constants at every call.

A PrimFunc called by ``call_tir`` with a ``Constant`` in the same argument position at
every call site (a weight bound by ``relax.build(..., params=)`` or ``BindParams``) gets
those positions in its ``layout_free_buffers`` attribute (TVM's pass of the same name):
a default schedule may then store such an input in whatever layout its loops want,
and ``SplitLayoutRewritePreproc`` rewrites the constants to that layout at build time.
A kernel also used in any other way (``call_tir`` with a non-constant there, passed as
a value) gets no mark for that position, and a mark without a constant behind it is
removed (``topi.nn.dense`` marks its weight whether or not it is bound).

>>> import numpy as np
>>> from rvm import relax
>>> from rvm.relax.expr import Var
>>> from rvm.relax.struct_info import TensorStructInfo
>>> bb = relax.BlockBuilder()
>>> x = Var("x", TensorStructInfo((2, 3), "float32"))
>>> w = relax.const(np.ones((3, 4), "float32"))
>>> with bb.function("main", [x]):
...     out = bb.emit(relax.op.matmul(x, w))
...     _ = bb.emit_func_output(out)
>>> mod = relax.transform.LegalizeOps()(bb.get())
>>> AttachAttrLayoutFreeBuffers()(mod)["matmul"].get_attr("layout_free_buffers")
[1]
"""
from rvm.dlight.cpu.pack import LAYOUT_FREE
from rvm.ir.expr import GlobalVar
from rvm.ir.transform import ModulePass, PassInfo
from rvm.relax.expr import Constant, Tuple
from rvm.relax.function import Function
from rvm.relax.expr_functor import ExprVisitor
from rvm.relax.op.registry import Op
from rvm.relax.transform.function_pass import replace_functions
from rvm.tir.function import PrimFunc


class _CallSites(ExprVisitor):
    """Per kernel name: for each argument position, whether every call passed a Constant;
    names of kernels used otherwise (``other``)."""

    def __init__(self):
        self.constant = {}
        self.other = set()

    def visit_call_(self, call):
        if isinstance(call.op, Op) and call.op.name == "relax.call_tir" and len(call.args) >= 2 \
                and isinstance(call.args[0], GlobalVar) and isinstance(call.args[1], Tuple):
            name = call.args[0].name_hint
            flags = [isinstance(a, Constant) for a in call.args[1].fields]
            seen = self.constant.get(name)
            if seen is None:
                self.constant[name] = flags
            else:
                self.constant[name] = [a and b for a, b in zip(seen, flags)]
            for arg in call.args[1:]:
                self.visit_expr(arg)
            return
        super().visit_call_(call)

    def visit_global_var_(self, gvar):
        self.other.add(gvar.name_hint)  # a kernel passed as a value: its callers are unknown


def layout_free_positions(mod):
    """{kernel name: sorted argument positions that are constants at every call_tir}."""
    sites = _CallSites()
    for func in mod.functions.values():
        if isinstance(func, Function):
            sites.visit_expr(func)
    return {name: [k for k, flag in enumerate(flags) if flag]
            for name, flags in sites.constant.items() if name not in sites.other}


def attach_attr_layout_free_buffers(mod, ctx=None):
    """``mod`` with ``layout_free_buffers`` set on its kernels (module docstring)."""
    positions = layout_free_positions(mod)
    changed = {}
    for gv, func in mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        marked = positions.get(gv.name_hint, [])
        if marked:
            if func.get_attr(LAYOUT_FREE) != marked:
                changed[gv] = func.with_attr(LAYOUT_FREE, marked)
        elif func.get_attr(LAYOUT_FREE) is not None:
            changed[gv] = func.with_fields(attrs={k: v for k, v in func.attrs.items()
                                                  if k != LAYOUT_FREE})
    return replace_functions(mod, changed)


def AttachAttrLayoutFreeBuffers():  # noqa: N802  (passes are CamelCase factories)
    """A pass marking kernel inputs that are constants at every call (module docstring)."""
    return ModulePass(attach_attr_layout_free_buffers, PassInfo(0, "AttachAttrLayoutFreeBuffers"))
