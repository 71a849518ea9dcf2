"""The "python" target: a runtime Module running lowered PrimFuncs with the reference evaluator.

Arguments are checked like the C kernels check them (count, rank, dtype,
shapes and symbolic dimensions), with errors naming the kernel and the
parameter, then the body runs over flat numpy views of the tensors.
"""
import numpy as np

from rvm.codegen.c.kernel_signature import KernelSignature, kernel_functions
from rvm.tir.eval import Evaluator
from rvm.runtime.data_type import DataType
from rvm.runtime.module import Module
from rvm.runtime.ndarray import NDArray
from rvm.runtime.packed_func import PackedFunc
from rvm.tir.expr import IntImm
from rvm.tir.expr_printer import dim_text


def _float_value(dtype, value):
    """A scalar argument as the evaluator computes with it (narrow floats: float32)."""
    if dtype.is_narrow_float:
        return np.float32(dtype.numpy_dtype.type(value))
    return dtype.numpy_dtype.type(value)


class PythonKernel:
    """One lowered PrimFunc made callable: ``kernel(*args)`` checks and runs it."""

    def __init__(self, name, func):
        self.name = name
        self.func = func
        self.signature = KernelSignature(name, func)
        evaluator = Evaluator(name)
        self._body = evaluator.stmt(func.body)
        self._dims = [(step, evaluator.expr(step.dim)) for step in self.signature.steps]

    def _tensor(self, param, value):
        if isinstance(value, NDArray):
            array = value._numpy_view()  # (numpy takes no DLPack of bfloat16, float8 ...)
        elif isinstance(value, np.ndarray):
            array = value
        elif hasattr(value, "__dlpack__"):
            array = np.from_dlpack(value)
        else:
            raise TypeError(f"{self.name}: parameter '{param.name}' expects a tensor "
                            f"{param.expect}, got {type(value).__name__}")
        if array.ndim != len(param.shape):
            raise ValueError(f"{self.name}: parameter '{param.name}' expects {param.expect} "
                             f"(rank {len(param.shape)}), got a tensor of rank {array.ndim}")
        if DataType(array.dtype) != param.dtype:
            raise TypeError(f"{self.name}: parameter '{param.name}' expects {param.expect}, "
                            f"got dtype {DataType(array.dtype)}")
        if not array.flags.c_contiguous:
            raise ValueError(f"{self.name}: parameter '{param.name}' must be compact row-major")
        return array

    def _scalar(self, param, value):
        dtype = param.dtype
        if isinstance(value, (bool, np.bool_)) and (dtype.is_bool or dtype.is_int):
            return bool(value) if dtype.is_bool else int(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if param.is_size and value < 0:
                raise ValueError(param.size_error(self.name, int(value)))
            return _float_value(dtype, value) if dtype.is_float else int(value)
        if isinstance(value, (float, np.floating)) and dtype.is_float:
            return _float_value(dtype, value)
        raise TypeError(f"{self.name}: parameter '{param.name}' expects {param.expect}, "
                        f"got {type(value).__name__}")

    def __call__(self, *args):
        sig = self.signature
        if len(args) != len(sig.params):
            raise ValueError(sig.arity_message(len(args)))
        env = {}
        arrays = {}
        for param, value in zip(sig.params, args):
            if param.kind == "scalar":
                env[id(param.var)] = self._scalar(param, value)
            else:
                arrays[param.index] = self._tensor(param, value)
        for step, dim in self._dims:
            got = arrays[step.param.index].shape[step.axis]
            if step.action == "bind":
                env[id(step.dim)] = got
                continue
            want = dim(env)
            if got != want:
                what = "" if isinstance(step.dim, IntImm) else f"{dim_text(step.dim)} = "
                raise ValueError(f"{self.name}: parameter '{step.param.name}' expects shape "
                                 f"{step.param.expect}, got {got} on axis {step.axis} "
                                 f"(expected {what}{want})")
        for param in sig.params:
            if param.kind == "tensor":
                env[id(param.buffer.data)] = arrays[param.index].reshape(-1)
        with np.errstate(all="ignore"):
            self._body(env)


class PythonKernelLibrary(Module):
    """Lowered PrimFuncs run by the reference evaluator; ``get_source()`` shows the lowered TIR."""

    type_key = "python_kernels"

    def __init__(self, named_funcs):
        super().__init__()
        self.kernels = {name: PythonKernel(name, func) for name, func in named_funcs}
        self._packed = {}

    def _get_own_function(self, name):
        kernel = self.kernels.get(name)
        if kernel is None:
            return None
        func = self._packed.get(name)
        if func is None:
            func = self._packed[name] = PackedFunc(kernel)
        return func

    def _own_function_names(self):
        return list(self.kernels)

    def get_source(self, fmt="tir"):
        """The lowered PrimFuncs as text."""
        if fmt not in ("tir", ""):
            raise ValueError(f"get_source: format '{fmt}' is not available; expected 'tir'")
        return "\n\n".join(f"# {name}\n{kernel.func!r}" for name, kernel in self.kernels.items())

    def save_to_bytes(self):
        """Always refused: the reference evaluator is part of the compiler, not the runtime."""
        raise NotImplementedError(
            "kernels built for target 'python' run on the compiler's reference evaluator and "
            "cannot be saved into an executable file; build with target='c' to export")

    def __repr__(self):
        return f"<rvm.codegen.PythonKernelLibrary: {', '.join(self.kernels)}>"


def build_python(mod):
    """A PythonKernelLibrary over the lowered PrimFuncs of ``mod``."""
    return PythonKernelLibrary(kernel_functions(mod))
