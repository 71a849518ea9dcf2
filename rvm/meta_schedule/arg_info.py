"""What a kernel's arguments look like, so a runner can make inputs for it.

``ArgInfo.from_prim_func(func)`` lists one ``TensorInfo(dtype, shape)`` per
parameter; the JSON form is TVM's (``["TENSOR", "float32", [128, 128]]``).
Tuning measures kernels on concrete inputs, so every dimension must be a
constant; a symbolic one is rejected with the parameter and dimension named.

>>> from rvm.tir.buffer import decl_buffer
>>> from rvm.tir.function import PrimFunc
>>> from rvm.tir.stmt import Evaluate
>>> f = PrimFunc([decl_buffer((4, 8), "float32", "A")], Evaluate(0))
>>> ArgInfo.from_prim_func(f)
[TensorInfo('float32', [4, 8])]
>>> ArgInfo.from_json(_[0].as_json())
TensorInfo('float32', [4, 8])
"""
from rvm.ir.module import IRModule
from rvm.runtime.data_type import DataType
from rvm.tir.expr import IntImm
from rvm.tir.function import PrimFunc


class ArgInfo:
    """Base of argument descriptions."""

    @staticmethod
    def from_json(data):
        """The ArgInfo of a JSON value written by ``as_json``."""
        if not isinstance(data, (list, tuple)) or not data:
            raise ValueError(f"ArgInfo JSON must be a non-empty list, got {data!r}")
        if data[0] == "TENSOR":
            if len(data) != 3 or not isinstance(data[2], (list, tuple)):
                raise ValueError(f"TensorInfo JSON is ['TENSOR', dtype, shape], got {data!r}")
            return TensorInfo(data[1], data[2])
        raise ValueError(f"unknown ArgInfo kind {data[0]!r}; expected 'TENSOR'")

    @staticmethod
    def from_prim_func(func):
        """One TensorInfo per parameter of ``func`` (ValueError for symbolic shapes, scalars)."""
        if not isinstance(func, PrimFunc):
            raise TypeError(f"ArgInfo.from_prim_func expects a PrimFunc, got "
                            f"{type(func).__name__}")
        infos = []
        for param in func.params:
            buf = func.buffer_map.get(param)
            if buf is None:
                raise ValueError(f"cannot tune a kernel with scalar parameter "
                                 f"'{param.name_hint}'; expected buffer parameters only")
            shape = []
            for axis, dim in enumerate(buf.shape):
                if not isinstance(dim, IntImm):
                    raise ValueError(
                        f"cannot tune a kernel with symbolic shapes: buffer '{buf.name}' has "
                        f"dimension {axis} = {dim}; expected constants (specialize the kernel "
                        "to concrete shapes first)")
                shape.append(dim.value)
            infos.append(TensorInfo(buf.dtype, shape))
        return infos

    @staticmethod
    def from_entry_func(mod, remove_preproc=True):
        """The ArgInfos of the only PrimFunc of ``mod`` (or of its "main")."""
        return ArgInfo.from_prim_func(entry_prim_func(mod))


class TensorInfo(ArgInfo):
    """A tensor argument: ``dtype`` (a DataType) and ``shape`` (a list of ints)."""

    def __init__(self, dtype, shape):
        self.dtype = DataType(dtype)
        self.shape = [int(d) for d in shape]

    def as_json(self):
        """``["TENSOR", dtype, shape]``."""
        return ["TENSOR", str(self.dtype), list(self.shape)]

    def __eq__(self, other):
        return (isinstance(other, TensorInfo) and self.dtype == other.dtype
                and self.shape == other.shape)

    def __hash__(self):
        return hash((str(self.dtype), tuple(self.shape)))

    def __repr__(self):
        return f"TensorInfo({str(self.dtype)!r}, {self.shape})"


def entry_prim_func(mod):
    """The PrimFunc a tuning workload is about: the only one in ``mod``, or its "main"."""
    if isinstance(mod, PrimFunc):
        return mod
    if not isinstance(mod, IRModule):
        raise TypeError(f"expected an IRModule or a PrimFunc, got {type(mod).__name__}")
    prims = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if len(prims) == 1:
        return prims[0][1]
    for name, func in prims:
        if name == "main":
            return func
    raise ValueError(f"expected a module with one PrimFunc or a PrimFunc named 'main', got "
                     f"{[name for name, _ in prims] or 'no PrimFunc'}")
