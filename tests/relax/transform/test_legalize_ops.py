"""LegalizeOps: high-level operators become call_tir of topi kernels."""
import math

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import Call, Var
from rvm.relax import op as O
from rvm.relax.op.registry import Op
from rvm.relax.struct_info import TensorStructInfo
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.topi.broadcast import add
from rvm.topi.matmul import matmul
from rvm.topi.nn.elemwise import relu
from rvm.relax.transform.legalize_ops import LEGALIZE_RULES, LegalizeOps


def test_legalized_module_equals_the_emit_te_one():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")):
            with R.dataflow():
                lv0 = R.matmul(x, w)
                lv1 = R.nn.relu(lv0)
                gv = R.add(lv1, lv1)
                R.output(gv)
            return gv

    x = Var("x", TensorStructInfo((2, 3), "float32"))
    w = Var("w", TensorStructInfo((3, 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv0 = bb.emit_te(matmul, x, w, out_dtype=None, primfunc_name_hint="matmul")
            lv1 = bb.emit_te(relu, lv0, primfunc_name_hint="relu")
            gv = bb.emit_output(bb.call_te(add, lv1, lv1, primfunc_name_hint="add"))
        bb.emit_func_output(gv)
    assert_structural_equal(LegalizeOps()(Before), bb.get())


def test_module_without_high_level_ops_is_unchanged():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            return x

    assert LegalizeOps()(Before) is Before


_CASES = {
    "relax.add": (lambda x: O.add(x, x), lambda a: a + a),
    "relax.subtract": (lambda x: O.subtract(x, x), lambda a: a - a),
    "relax.multiply": (lambda x: O.multiply(x, x), lambda a: a * a),
    "relax.divide": (lambda x: O.divide(x, x), lambda a: a / a),
    "relax.maximum": (lambda x: O.maximum(x, x), lambda a: a),
    "relax.exp": (lambda x: O.exp(x), np.exp),
    "relax.tanh": (lambda x: O.tanh(x), np.tanh),
    "relax.sigmoid": (lambda x: O.sigmoid(x), lambda a: 1 / (1 + np.exp(-a))),
    "relax.nn.relu": (lambda x: O.nn.relu(x), lambda a: np.maximum(a, 0)),
    "relax.nn.softmax": (lambda x: O.nn.softmax(x, axis=1),
                         lambda a: np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)),
    "relax.permute_dims": (lambda x: O.permute_dims(x, [1, 0]), lambda a: a.T),
    "relax.reshape": (lambda x: O.reshape(x, (3, 2)), lambda a: a.reshape(3, 2)),
    "relax.sum": (lambda x: O.sum(x, axis=[1]), lambda a: a.sum(axis=1)),
    "relax.less": (lambda x: O.less(x, O.multiply(x, x)), lambda a: a < a * a),
    "relax.rsqrt": (lambda x: O.rsqrt(x), lambda a: 1 / np.sqrt(a)),
    "relax.nn.gelu": (lambda x: O.nn.gelu(x),
                      lambda a: 0.5 * a * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))),
    "relax.nn.silu": (lambda x: O.nn.silu(x), lambda a: a / (1 + np.exp(-a))),
    "relax.nn.log_softmax": (lambda x: O.nn.log_softmax(x, axis=1),
                             lambda a: a - np.log(np.exp(a).sum(axis=1, keepdims=True))),
    "relax.concat": (lambda x: O.concat([x, O.negative(x)], axis=0),
                     lambda a: np.concatenate([a, -a], axis=0)),
    "relax.astype": (lambda x: O.astype(x, "int32"), lambda a: a.astype("int32")),
    "relax.mean": (lambda x: O.mean(x, axis=[0], keepdims=True),
                   lambda a: a.mean(axis=0, keepdims=True)),
}


@pytest.mark.parametrize("op_name", sorted(_CASES))
def test_legalized_operators_compute_what_numpy_does(op_name):
    build_op, reference = _CASES[op_name]
    assert op_name in LEGALIZE_RULES
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(build_op(x))
        bb.emit_func_output(y)
    mod = bb.get()
    legalized = LegalizeOps()(mod)
    value = legalized["main"].body.blocks[0].bindings[0].value
    assert isinstance(value, Call) and value.op is Op.get("relax.call_tir")
    vm = relax.VirtualMachine(relax.build(mod, target="python"), rvm.cpu())
    a = np.random.default_rng(0).uniform(0.5, 2.0, (2, 3)).astype("float32")
    np.testing.assert_allclose(vm["main"](a).numpy(), reference(a), rtol=1e-5, atol=1e-6)


def test_scalar_constants_are_inlined_into_the_kernel():
    """R.add(x, R.const(1.5)) legalizes to a kernel reading x only, 1.5 inside (TVM's form)."""
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "bool"):
            y = R.add(x, R.const(1.5, "float32"))
            z = R.multiply(R.const(2, "float32"), y)
            c = R.greater(z, R.const(4, "float32"))
            return c

    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def add(x: T.Buffer((T.int64(4),), "float32"), T_add: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"tir.noalias": True})
            for ax0 in range(T.int64(4)):
                with T.block("T_add"):
                    v_ax0 = T.axis.remap("S", [ax0])
                    T_add[v_ax0] = x[v_ax0] + T.float32(1.5)

        @T.prim_func(private=True)
        def multiply(y: T.Buffer((T.int64(4),), "float32"),
                     T_multiply: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"tir.noalias": True})
            for ax0 in range(T.int64(4)):
                with T.block("T_multiply"):
                    v_ax0 = T.axis.remap("S", [ax0])
                    T_multiply[v_ax0] = T.float32(2) * y[v_ax0]

        @T.prim_func(private=True)
        def greater(z: T.Buffer((T.int64(4),), "float32"),
                    T_greater: T.Buffer((T.int64(4),), "bool")):
            T.func_attr({"tir.noalias": True})
            for ax0 in range(T.int64(4)):
                with T.block("T_greater"):
                    v_ax0 = T.axis.remap("S", [ax0])
                    T_greater[v_ax0] = z[v_ax0] > T.float32(4)

        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "bool"):
            cls = Expected
            y = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))
            z = R.call_tir(cls.multiply, (y,), out_sinfo=R.Tensor((4,), "float32"))
            c = R.call_tir(cls.greater, (z,), out_sinfo=R.Tensor((4,), "bool"))
            return c

    assert_structural_equal(LegalizeOps()(Before), Expected)
    out = relax.VirtualMachine(relax.build(Before), rvm.cpu())["main"](
        np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(out.numpy(), [False, True, True, True])


def test_a_call_of_constants_only_keeps_its_tensors():
    """Both operands constant: nothing to inline into (FoldConstant's case), still correct."""
    from rvm.relax.transform.legalize.registry import scalar_constants

    one = relax.const(1.0, "float32")
    assert scalar_constants([one, one]) == [one, one]
    x = Var("x", TensorStructInfo((4,), "float32"))
    inlined = scalar_constants([x, one])
    assert inlined[0] is x and inlined[1].value == 1.0 and str(inlined[1].dtype) == "float32"
    vector = relax.const(np.ones(2, "float32"))
    assert scalar_constants([x, vector])[1] is vector
