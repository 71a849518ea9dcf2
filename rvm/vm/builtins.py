"""The builtins implemented in Python: closures, calls of kernels with symbolic extents,
tensor-to-shape and shape-to-tensor conversion, and R.print / R.assert_op (``relax.run.*``).

The others (memory, shape checks and matching, tuples, conditions) are implemented
in C only; ``rvm.bytecode.contract.C_BUILTINS`` lists them. All are registered in the
global registry under ``vm.builtin.*``.

>>> from rvm.runtime.packed_func import get_global_func
>>> get_global_func("vm.builtin.make_closure")(lambda a, b: a - b, 10)(3)
7
"""
import numpy as np

from rvm.bytecode.contract import INVOKE_CLOSURE
from rvm.runtime.container import ShapeTuple
from rvm.runtime.ndarray import NDArray, array
from rvm.runtime.packed_func import PackedFunc, register_builtin
from rvm.vm.closure import VMClosure
from rvm.vm.message_format import format_message


@register_builtin("vm.builtin.make_closure")
def make_closure(func, *saved_args):
    """A closure: ``func`` with ``saved_args`` bound in front of the call's arguments."""
    if isinstance(func, VMClosure):
        return VMClosure(func.vm, func.func_index, func.saved_args + saved_args)
    if not callable(func):
        raise TypeError(f"make_closure: expected a function, got {type(func).__name__}")
    return PackedFunc(lambda *args: func(*saved_args, *args))


@register_builtin(INVOKE_CLOSURE)
def invoke_closure(vm, closure, *args):
    """Calls ``closure`` with ``args`` (after its saved arguments). Both engines run a
    closure of their own VM in a new frame instead (CalleeKind.CLOSURE)."""
    if isinstance(closure, VMClosure):
        return closure.vm.invoke_closure(closure, *args)
    if not callable(closure):
        raise TypeError(f"invoke_closure: expected a closure, got {type(closure).__name__}")
    return closure(*args)


@register_builtin("vm.builtin.call_tir_dyn")
def call_tir_dyn(func, *args):
    """Calls ``func(args[:-1]..., *shape)``: the last argument is a shape whose dimensions
    are passed as trailing integers (kernels with symbolic extents)."""
    if not args or not isinstance(args[-1], tuple):
        raise TypeError("call_tir_dyn: the last argument must be a shape of extra integers")
    return func(*args[:-1], *args[-1])


@register_builtin("vm.builtin.tensor_to_shape")
def tensor_to_shape(tensor):
    """The shape whose dimensions are the values of a 1-d integer tensor."""
    if not isinstance(tensor, NDArray) or tensor.ndim != 1 or not tensor.dtype.is_int:
        raise TypeError(f"tensor_to_shape: expected a 1-d integer tensor, got {tensor!r:.60}")
    return ShapeTuple(int(v) for v in tensor.numpy())


@register_builtin("vm.builtin.shape_to_tensor")
def shape_to_tensor(shape):
    """The 1-d int64 tensor of a shape's dimensions."""
    if not isinstance(shape, ShapeTuple):
        raise TypeError(f"shape_to_tensor: expected a shape, got {type(shape).__name__}")
    return array(np.array(shape, "int64").reshape(len(shape)))


def _printable(value):
    return value.numpy() if isinstance(value, NDArray) else value


@register_builtin("relax.run.print")
def run_print(format, *values):  # noqa: A002  (TVM's name)
    """``R.print``: prints ``format`` with its positional fields replaced by ``values``
    (rvm.vm.message_format), or the values separated by spaces."""
    values = [_printable(v) for v in values]
    print(format_message(format, values, "print") if format
          else " ".join(str(v) for v in values))


@register_builtin("relax.run.assert_op")
def run_assert_op(condition, format, *values):  # noqa: A002  (TVM's name)
    """``R.assert_op``: raises AssertionError unless ``condition`` (a bool scalar) holds;
    its message is ``format`` with the values in its positional fields (as ``print``)."""
    cond = _printable(condition)
    if getattr(cond, "shape", ()) != ():
        raise TypeError(f"assert_op: the condition must be a scalar, got shape "
                        f"{tuple(cond.shape)}")
    if not bool(cond):
        values = [_printable(v) for v in values]
        raise AssertionError(format_message(format, values, "assert_op") if format
                             else "Assertion failed" + "".join(f" {v}" for v in values))
