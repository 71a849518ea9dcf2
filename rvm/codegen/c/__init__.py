"""rvm.codegen.c: the C kernel generator (lowered PrimFuncs -> C99 -> a KernelLibrary)."""
