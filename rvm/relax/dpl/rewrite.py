"""rewrite_call: replace every binding value a pattern matches by what a rewriter returns."""
from rvm.relax.binding import VarBinding
from rvm.relax.dpl.pattern import DFPattern, match_by_id
from rvm.relax.expr_functor import ExprMutator
from rvm.relax.function import Function

_MAX_ROUNDS = 64


class _Rewriter(ExprMutator):
    def __init__(self, pattern, rewriter):
        super().__init__()
        self.pattern = pattern
        self.rewriter = rewriter
        self.var2val = {}
        self.changed = False

    def visit_var_binding_(self, binding):
        value = self.visit_expr(binding.value)
        matches = match_by_id(self.pattern, value, self.var2val)
        if matches is not None:
            new = self.rewriter(value, matches)
            if new is None:
                raise ValueError(f"rewrite_call: the rewriter returned None for binding "
                                 f"'{binding.var.name_hint}'; return the expression to keep "
                                 "it unchanged")
            if new is not value:
                value = self.builder.normalize(new)
                self.changed = True
        var = self._redefine(binding.var, value.struct_info_)
        if var is binding.var and value is binding.value:
            self.builder.emit_normalized(binding)
        else:
            self.builder.emit_normalized(VarBinding(var, value, binding.span))
        self.var2val[id(var)] = value


def rewrite_call(pattern, rewriter, func):
    """``func`` with every binding value matching ``pattern`` replaced by
    ``rewriter(value, matches)`` (``matches``: {pattern: expression}), until nothing changes.

    Variables are seen through, so a pattern spanning several bindings matches
    at its root; the bindings it no longer needs stay (dead-code elimination
    removes them).
    """
    if not isinstance(pattern, DFPattern):
        raise TypeError(f"rewrite_call: pattern must be a DFPattern, got "
                        f"{type(pattern).__name__}")
    if not callable(rewriter):
        raise TypeError("rewrite_call: rewriter must be callable(expr, matches) -> expr")
    if not isinstance(func, Function):
        raise TypeError(f"rewrite_call: expected a relax Function, got {type(func).__name__}")
    for _ in range(_MAX_ROUNDS):
        mutator = _Rewriter(pattern, rewriter)
        new = mutator.visit_expr(func)
        if not mutator.changed:
            return new
        func = new
    raise ValueError(f"rewrite_call: still rewriting after {_MAX_ROUNDS} rounds; the rewriter "
                     "keeps producing expressions the pattern matches")
