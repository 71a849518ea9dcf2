"""rvm.vm: the virtual machine that runs bytecode executables, and its builtins."""
from rvm.vm.closure import VMClosure
from rvm.vm.debugger import Debugger, Stop
from rvm.vm.machine import VirtualMachine
from rvm.vm.profiler import NO_OP, SKIP_RUN, ProfileReport

__all__ = ["Debugger", "NO_OP", "ProfileReport", "SKIP_RUN", "Stop", "VMClosure", "VirtualMachine"]
