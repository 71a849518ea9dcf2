"""Builtins for values and control: null, copy, conditions, tuples and closures."""
import numpy as np

from rvm.runtime.container import Array
from rvm.runtime.ndarray import NDArray
from rvm.runtime.packed_func import PackedFunc
from rvm.vm.builtin_registry import builtin
from rvm.vm.closure import VMClosure


@builtin("vm.builtin.null_value")
def null_value():
    """None."""
    return None


@builtin("vm.builtin.copy")
def copy(value):
    """The value itself (a register-to-register move)."""
    return value


@builtin("vm.builtin.read_if_cond")
def read_if_cond(cond):
    """The truth of a branch condition: a bool/int, or a one-element tensor."""
    if isinstance(cond, NDArray):
        if cond.size != 1:
            raise ValueError(f"if condition must be a scalar tensor, got "
                             f"{cond.dtype}{list(cond.shape)}")
        return bool(cond.numpy().reshape(()))
    if isinstance(cond, (bool, int, np.bool_, np.integer)):
        return bool(cond)
    raise TypeError(f"if condition must be a bool, int or scalar tensor, "
                    f"got {type(cond).__name__}")


@builtin("vm.builtin.make_tuple")
def make_tuple(*fields):
    """A tuple (Array) of the arguments."""
    return Array(fields)


@builtin("vm.builtin.tuple_getitem")
def tuple_getitem(tup, index):
    """Field ``index`` of a tuple."""
    if not isinstance(tup, (Array, tuple, list)):
        raise TypeError(f"tuple_getitem: expected a Tuple, got {type(tup).__name__}")
    if not -len(tup) <= index < len(tup):
        raise IndexError(f"tuple_getitem: index {index} out of range for a tuple of "
                         f"{len(tup)} fields")
    return tup[index]


@builtin("vm.builtin.make_closure")
def make_closure(func, *saved_args):
    """A closure: ``func`` with ``saved_args`` bound in front of the call's arguments."""
    if isinstance(func, VMClosure):
        return VMClosure(func.vm, func.func_index, func.saved_args + saved_args)
    if not callable(func):
        raise TypeError(f"make_closure: expected a function, got {type(func).__name__}")
    return PackedFunc(lambda *args: func(*saved_args, *args))


@builtin("vm.builtin.invoke_closure")
def invoke_closure(vm, closure, *args):
    """Calls ``closure`` with ``args`` (after its saved arguments)."""
    if isinstance(closure, VMClosure):
        return closure.vm.invoke_closure(closure, *args)
    if not callable(closure):
        raise TypeError(f"invoke_closure: expected a closure, got {type(closure).__name__}")
    return closure(*args)


@builtin("vm.builtin.call_tir_dyn")
def call_tir_dyn(func, *args):
    """Calls ``func(args[:-1]..., *shape)``: the last argument is a shape whose dimensions
    are passed as trailing integers (kernels with symbolic extents)."""
    if not args or not isinstance(args[-1], tuple):
        raise TypeError("call_tir_dyn: the last argument must be a shape of extra integers")
    return func(*args[:-1], *args[-1])
