"""VMClosure: a VM function of one VirtualMachine with arguments bound in front."""


class VMClosure:
    """A callable value for VM function ``func_index`` of ``vm``, with ``saved_args``.

    Calling it from Python runs the function; inside the VM,
    ``vm.builtin.invoke_closure`` calls it without leaving the interpreter loop.
    """

    __slots__ = ("vm", "func_index", "saved_args")

    def __init__(self, vm, func_index, saved_args=()):
        self.vm = vm
        self.func_index = func_index
        self.saved_args = tuple(saved_args)

    @property
    def name(self):
        return self.vm.executable.func_table[self.func_index].name

    def __call__(self, *args):
        return self.vm.invoke_closure(self, *args)

    def __repr__(self):
        return f"<VMClosure {self.name} saved={len(self.saved_args)}>"
