"""AnnotateTIROpPattern: every kernel gets its fusion pattern as the op_pattern attribute."""
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.script import tir as T
from rvm.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern


@I.ir_module
class Before:
    @T.prim_func(private=True)
    def relu(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @T.prim_func(private=True)
    def row_sum(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + x[vi, vk]

    @T.prim_func(private=True)
    def stated(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4, 8), "float32")):
        T.func_attr({"op_pattern": 8})
        for i, j in T.grid(4, 8):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj]

    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        cls = Before
        with R.dataflow():
            a = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4, 8), "float32"))
            b = R.call_tir(cls.stated, (a,), out_sinfo=R.Tensor((4, 8), "float32"))
            c = R.call_tir(cls.row_sum, (b,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(c)
        return c


@I.ir_module
class Expected:
    @T.prim_func(private=True)
    def relu(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4, 8), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(4, 8):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @T.prim_func(private=True)
    def row_sum(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 3})
        for i, k in T.grid(4, 8):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + x[vi, vk]

    @T.prim_func(private=True)
    def stated(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4, 8), "float32")):
        T.func_attr({"op_pattern": 8})
        for i, j in T.grid(4, 8):
            with T.block("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj]

    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        cls = Expected
        with R.dataflow():
            a = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4, 8), "float32"))
            b = R.call_tir(cls.stated, (a,), out_sinfo=R.Tensor((4, 8), "float32"))
            c = R.call_tir(cls.row_sum, (b,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(c)
        return c


def test_kernels_are_annotated_and_a_stated_pattern_is_kept():
    assert_structural_equal(AnnotateTIROpPattern()(Before), Expected)


def test_an_annotated_module_is_returned_as_it_is():
    assert AnnotateTIROpPattern()(Expected) is Expected
