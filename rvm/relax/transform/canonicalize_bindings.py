"""CanonicalizeBindings: read values where they are made, not through copies of them.

- ``y = x`` where ``y`` is a DataflowVar, or both are Vars of the same struct info
  (as in TVM): uses of ``y`` read ``x`` (the binding is left for DeadCodeElimination);
- ``t[i]`` where ``t`` is bound to a tuple written out (``t = (a, b)``): it reads
  ``a`` (or ``b``) itself.

Legalization writes such copies (batch_norm's result is a tuple of the normalized
tensor and the statistics, then ``lv[0]``); after this pass the kernels reading the
tensor read it from the kernel that made it, so FuseOps sees them connected.

>>> from rvm.ir.module import IRModule
>>> from rvm.script import from_source
>>> main = from_source('''
... from rvm.script import relax as R
... @R.function
... def main(x: R.Tensor((4,), "float32")):
...     with R.dataflow():
...         t = (x, x)
...         a = t[1]
...         b = a
...         c = R.add(b, b)
...         R.output(c)
...     return c
... ''')
>>> CanonicalizeBindings()(IRModule({"main": main}))["main"].body.blocks[0].bindings[3].value.args[0].name_hint
'x'
"""
from rvm.ir.base import structural_equal
from rvm.relax.expr import DataflowVar, Tuple, TupleGetItem, Var
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.transform.function_pass import function_pass


class _Canonicalizer(ExprMutator):
    def __init__(self):
        super().__init__()
        self.tuples = {}  # id(tuple var) -> (Tuple, the block it was bound in)
        self.block = None

    def visit_binding_block(self, block):
        outer, self.block = self.block, block
        try:
            return super().visit_binding_block(block)
        finally:
            self.block = outer

    def visit_var_binding_(self, binding):
        super().visit_var_binding_(binding)
        var = self.lookup(binding.var)
        value = self.builder.lookup_binding(var)
        if isinstance(value, Tuple):
            self.tuples[id(var)] = (value, self.block)
        elif isinstance(value, Var) and (isinstance(binding.var, DataflowVar) or (
                not isinstance(value, DataflowVar) and structural_equal(
                    binding.var.struct_info_, value.struct_info_, map_free_vars=False))):
            self.set_var_remap(binding.var, value)

    def visit_tuple_get_item_(self, item):
        new = super().visit_tuple_get_item_(item)
        fields, block = self.tuples.get(id(new.tuple_value), (None, None))
        if fields is None or not 0 <= new.index < len(fields.fields):
            return new
        field = fields.fields[new.index]
        if isinstance(field, DataflowVar) and block is not self.block:
            return new  # the field is not visible outside its dataflow block
        return field


def canonicalize_bindings(func):
    """``func`` with copies read through (module docstring)."""
    return _Canonicalizer().visit_expr(func)


def CanonicalizeBindings():  # noqa: N802  (passes are CamelCase factories)
    """A pass making uses read values where they are made (module docstring)."""
    return function_pass(lambda func, mod, ctx: canonicalize_bindings(func), opt_level=1,
                         name="CanonicalizeBindings")
