"""Hand-lowered Relax for the VM codegen tests: the form the default pipeline produces."""
import numpy as np

from rvm import te
from rvm.ir.module import IRModule
from rvm.relax.binding import BindingBlock, SeqExpr, VarBinding
from rvm.relax.expr import Call, DataTypeImm, ExternFunc, PrimValue, ShapeExpr, StringImm, Var
from rvm.relax.function import Function
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo


def tensor(name, shape, dtype="float32"):
    """A Var with tensor struct info."""
    return Var(name, TensorStructInfo(shape, dtype))


def func(params, bindings, result, name):
    """A Relax function of one binding block, with global_symbol ``name``."""
    bindings = [VarBinding(v, e) for v, e in bindings]
    return Function(params, SeqExpr([BindingBlock(bindings)] if bindings else [], result),
                    attrs={"global_symbol": name})


def alloc_storage(nbytes, dtype="float32"):
    """``relax.vm.alloc_storage`` of ``nbytes`` bytes."""
    return Call(Op.get("relax.vm.alloc_storage"),
                [ShapeExpr([nbytes]), PrimValue(0), DataTypeImm(dtype), StringImm("global")])


def alloc_tensor(storage, offset, shape, dtype="float32"):
    """``relax.vm.alloc_tensor`` in ``storage``."""
    shape = shape if isinstance(shape, Var) else ShapeExpr(shape)
    return Call(Op.get("relax.vm.alloc_tensor"),
                [storage, PrimValue(offset), shape, DataTypeImm(dtype)])


def kill(var):
    """``relax.vm.kill_object(var)``."""
    return Call(Op.get("relax.vm.kill_object"), [var])


def extern(name, *args):
    """A call of the packed function ``name``."""
    return Call(ExternFunc(name), list(args))


def builtin_with_ctx(name, *args):
    """``relax.call_builtin_with_ctx(name, args)``."""
    from rvm.relax.expr import Tuple

    return Call(Op.get("relax.call_builtin_with_ctx"), [ExternFunc(name), Tuple(list(args))],
                sinfo_args=[ObjectStructInfo()])


def add_kernel(n, name="add"):
    """A PrimFunc ``add(a, b, c)``: c = a + b on float32[n]."""
    a = te.placeholder((n,), name="A", dtype="float32")
    b = te.placeholder((n,), name="B", dtype="float32")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    return te.create_prim_func([a, b, c]).with_attr("global_symbol", name)


def dps_add_module(n=4):
    """``main(x, y) = add(x, y)`` through a kernel, with storage, tensor and kill."""
    x, y = tensor("x", (n,)), tensor("y", (n,))
    storage, out = Var("storage", ObjectStructInfo()), tensor("out", (n,))
    unit = Var("_", ObjectStructInfo())
    k = Var("k", ObjectStructInfo())
    mod = IRModule()
    gv = mod.add("add", add_kernel(n))
    main = func([x, y], [(storage, alloc_storage(4 * n)),
                         (out, alloc_tensor(storage, 0, (n,))),
                         (unit, Call(gv, [x, y, out])),
                         (k, kill(storage))], out, "main")
    mod.add("main", main)
    return mod


def rand(*shape, seed=0):
    """A float32 array of normal samples."""
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")
