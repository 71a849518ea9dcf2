"""rvm.codegen.python: the "python" target (lowered PrimFuncs run by rvm.tir.eval)."""
