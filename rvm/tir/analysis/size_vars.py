"""Which symbolic variables of a shape are sizes (never negative).

A variable that is a whole dimension (``n``) or a factor of a dimension that is a
product of variables (``n * m``) is a size: the dimension is a count of elements, and
the C kernels' bounds proofs read such a product's factors as non-negative (a kernel
checks its scalar size parameters on entry, the VM checks a size where it is bound).

>>> from rvm.tir.expr import Var
>>> n, m, k = Var("n", "int64"), Var("m", "int64"), Var("k", "int64")
>>> [v.name_hint for v in dimension_sizes(n * m)], dimension_sizes(k + 1)
(['n', 'm'], [])
"""
from rvm.tir.expr import Mul, Var


def dimension_sizes(dim):
    """The variables of dimension ``dim`` that are sizes: ``dim`` itself when it is a
    variable, the factors of a product of two or more variables, else none."""
    if isinstance(dim, Var):
        return [dim]
    factors, stack = [], [dim]
    while stack:
        node = stack.pop()
        if isinstance(node, Mul):
            stack += [node.b, node.a]
        elif isinstance(node, Var):
            factors.append(node)
        else:
            return []
    return factors if len(factors) >= 2 else []
