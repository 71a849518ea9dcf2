"""rvm.codegen: the backends, one package each (c, vm, python, byoc)."""
