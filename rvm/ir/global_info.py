"""Module-level information an IRModule carries beside its functions (TVM's
``tvm.ir.global_info``): ``VDevice``, a virtual device a tensor may be placed on.

>>> VDevice("llvm").vdevice_id
0
>>> VDevice("cuda", 1, "global").target
'cuda'
"""
from rvm.ir.node import Node


class VDevice(Node):
    """A virtual device: a target (its name, or a target object) with an index among the
    devices of that target and a memory scope, as TVM's ``tvm.ir.VDevice``.

    rvm runs on the CPU only: a VDevice names a placement; nothing is placed by it."""

    _fields = ("target", "vdevice_id", "memory_scope")

    def __init__(self, target=None, vdevice_id=0, memory_scope="global"):
        if target is not None and not isinstance(target, str) and not hasattr(target, "kind"):
            raise TypeError(f"VDevice: target must be a target name or a Target, got "
                            f"{type(target).__name__}")
        if isinstance(vdevice_id, bool) or not isinstance(vdevice_id, int) or vdevice_id < 0:
            raise TypeError(f"VDevice: vdevice_id must be a non-negative int, got "
                            f"{vdevice_id!r}")
        if not isinstance(memory_scope, str):
            raise TypeError(f"VDevice: memory_scope must be a str, got "
                            f"{type(memory_scope).__name__}")
        self.target = target
        self.vdevice_id = vdevice_id
        self.memory_scope = memory_scope

    def _fallback_repr(self):
        return f"VDevice({self.target!r}, {self.vdevice_id}, {self.memory_scope!r})"
