"""rvm.codegen.vm: the VM bytecode codegen (lowered Relax -> an Executable)."""
