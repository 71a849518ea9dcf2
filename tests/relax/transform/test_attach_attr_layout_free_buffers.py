"""AttachAttrLayoutFreeBuffers: a kernel input that is a constant at every call is marked
``layout_free_buffers``; one fed a variable anywhere, or a kernel used as a value, is not."""
import numpy as np

from rvm import relax
from rvm.relax.expr import Var
from rvm.relax.struct_info import TensorStructInfo
from rvm.relax.transform import AttachAttrLayoutFreeBuffers, LegalizeOps
from rvm.te.create_prim_func import create_prim_func
from rvm.te.operation import compute, placeholder

op = relax.op


def _two_calls(second_weight):
    """main calls one matmul kernel twice: x @ w1, then (x @ w1) @ ``second_weight``."""
    bb = relax.BlockBuilder()
    x = Var("x", TensorStructInfo((4, 4), "float32"))
    params = [x] if second_weight is not None else [x, Var("w", TensorStructInfo((4, 4),
                                                                                  "float32"))]
    w1 = relax.const(np.eye(4, dtype="float32"))
    with bb.function("main", params):
        a = bb.emit(op.matmul(x, w1))
        out = bb.emit(op.matmul(a, second_weight if second_weight is not None else params[1]))
        bb.emit_func_output(out)
    return LegalizeOps()(bb.get())


def _kernels(mod):
    return {gv.name_hint: f for gv, f in mod.functions.items() if hasattr(f, "buffer_map")}


def test_an_input_constant_at_every_call_is_marked():
    mod = AttachAttrLayoutFreeBuffers()(_two_calls(relax.const(np.ones((4, 4), "float32"))))
    [kernel] = _kernels(mod).values()  # both calls share one kernel
    assert kernel.get_attr("layout_free_buffers") == [1]


def test_an_input_fed_a_variable_at_one_call_is_not_marked():
    mod = AttachAttrLayoutFreeBuffers()(_two_calls(None))
    [kernel] = _kernels(mod).values()
    assert kernel.get_attr("layout_free_buffers") is None


def test_a_mark_without_a_constant_behind_it_is_removed():
    # topi.nn.dense marks its weight layout-free whether it is bound or not
    bb = relax.BlockBuilder()
    x, w = (Var(n, TensorStructInfo((2, 3), "float32")) for n in ("x", "w"))
    with bb.function("main", [x, w]):
        a = placeholder((2, 3), name="a")
        b = placeholder((2, 3), name="b")
        prim = create_prim_func([a, b, compute((2, 3), lambda i, j: a[i, j] + b[i, j])])
        gv = bb.add_func(prim.with_attr("layout_free_buffers", [1]), "add")
        out = bb.emit(relax.call_tir(gv, [x, w], TensorStructInfo((2, 3), "float32")))
        bb.emit_func_output(out)
    mod = AttachAttrLayoutFreeBuffers()(bb.get())
    assert mod["add"].get_attr("layout_free_buffers") is None


def test_nothing_to_mark_returns_the_module():
    mod = _two_calls(None)
    assert AttachAttrLayoutFreeBuffers()(mod) is mod
