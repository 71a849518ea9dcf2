"""FoldConstant: pure operators and kernels whose inputs are constants are evaluated."""
import numpy as np
import pytest

import rvm
from rvm.ir.structural import assert_structural_equal
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Constant, Var, const
from rvm.relax.op.binary import add, multiply
from rvm.relax.op.linear_algebra import matmul
from rvm.relax.op.manipulate import permute_dims
from rvm.relax.op.base import call_packed
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo
from rvm.runtime.ndarray import array
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.topi.nn.elemwise import relu
from rvm.relax.transform import fold_constant as fc
from rvm.relax.transform.fold_constant import FoldConstant, register_call_tir_evaluator

C = np.arange(6, dtype="float32").reshape(2, 3)


def _module(build_body):
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = build_body(bb, x)
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def test_operators_on_constants_are_folded_and_propagated():
    def before(bb, x):
        c = const(C)
        lv0 = bb.emit(add(c, c))
        lv1 = bb.emit(permute_dims(lv0, [1, 0]))
        bb.emit(matmul(lv0, lv1))
        return multiply(lv0, x)

    def expected(bb, x):
        c2 = Constant(array(C + C))
        bb.emit(c2)
        bb.emit(Constant(array((C + C).T.copy())))
        bb.emit(Constant(array((C + C) @ (C + C).T)))
        return multiply(c2, x)

    assert_structural_equal(FoldConstant()(_module(before)), _module(expected))


def test_non_constant_and_impure_calls_are_kept():
    mod = _module(lambda bb, x: add(x, const(C)))
    assert FoldConstant()(mod) is mod

    x = Var("x", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x], pure=False):
        y = bb.emit(call_packed("env.f", const(C), sinfo_args=ObjectStructInfo()))
        bb.emit_func_output(y)
    mod = bb.get()
    assert FoldConstant()(mod) is mod


def test_call_tir_needs_a_registered_evaluator():
    def before(bb, x):
        return bb.call_te(relu, const(C - 3))

    mod = _module(before)
    saved = list(fc._CALL_TIR_EVALUATOR)
    try:
        fc._CALL_TIR_EVALUATOR.clear()
        assert FoldConstant()(mod) is mod

        def evaluate(prim_func, args, out_sinfos):
            lib = rvm.build(prim_func, target="python")
            outs = [rvm.nd.empty(tuple(int(d) for d in s.shape_values), str(s.dtype))
                    for s in out_sinfos]
            lib["main"](*args, *outs)
            return outs

        register_call_tir_evaluator(evaluate)
        folded = FoldConstant()(mod)
    finally:
        fc._CALL_TIR_EVALUATOR[:] = saved
    value = folded["main"].body.blocks[0].bindings[0].value
    assert isinstance(value, Constant)
    np.testing.assert_array_equal(value.data.numpy(), np.maximum(C - 3, 0))


@pytest.mark.parametrize("op_name", sorted(fc.FOLD_EVALUATORS))
def test_every_evaluator_is_for_a_registered_operator(op_name):
    from rvm.relax.op.registry import Op

    assert Op.get(op_name).purity


@I.ir_module
class ScalarSum:
    @R.function
    def main(x: R.Tensor((), "float32")):
        with R.dataflow():
            a = R.add(R.const(1, "float32"), R.const(1, "float32"))
            b = R.add(a, x)
            R.output(b)
        return b


@I.ir_module
class ScalarSumFolded:
    @R.function
    def main(x: R.Tensor((), "float32")):
        with R.dataflow():
            a = R.const(2, "float32")
            b = R.add(R.const(2, "float32"), x)
            R.output(b)
        return b


def test_scalar_constants_fold_to_a_scalar():
    folded = FoldConstant()(ScalarSum)
    assert_structural_equal(folded, ScalarSumFolded)
    vm = rvm.relax.VirtualMachine(rvm.relax.build(folded), rvm.cpu())
    assert vm["main"](np.array(3, "float32")).numpy().shape == ()
    assert float(vm["main"](np.array(3, "float32")).numpy()) == 5.0
