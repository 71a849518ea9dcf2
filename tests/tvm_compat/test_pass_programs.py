"""Pass tests in the style of TVM's own (tests/python/relax/test_transform_*.py): a ``Before``
and an ``Expected`` module in script form, compared with ``assert_structural_equal`` after
the pass. TVM's idioms are kept: ``R.call_tir(Expected.add, (x,), R.Tensor(...))`` with the
class name and a positional out_sinfo, ``@T.prim_func(private=True)`` kernels, ``T.bool``
flags."""
import numpy as np

import rvm
from rvm import relax
from rvm.ir import assert_structural_equal
from rvm.script import ir as I, relax as R, tir as T
from tests.tvm_compat.helpers import round_trip


def test_legalize_add():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            gv: R.Tensor((2, 3), "float32") = R.add(x, y)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            gv = R.call_tir(Expected.add, (x, y), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(x: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                y: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                T_add: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("T_add"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1])
                    T.writes(T_add[v_ax0, v_ax1])
                    T_add[v_ax0, v_ax1] = x[v_ax0, v_ax1] + y[v_ax0, v_ax1]

    assert_structural_equal(round_trip(relax.transform.LegalizeOps()(Before)), Expected)


def test_legalize_add_with_a_scalar_constant():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            gv: R.Tensor((2, 3), "float32") = R.add(x, R.const(1, "float32"))
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            gv = R.call_tir(Expected.add, (x,), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(x: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                T_add: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("T_add"):
                    v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(x[v_ax0, v_ax1])
                    T.writes(T_add[v_ax0, v_ax1])
                    T_add[v_ax0, v_ax1] = x[v_ax0, v_ax1] + T.float32(1)

    assert_structural_equal(relax.transform.LegalizeOps()(Before), Expected)


def test_legalize_symbolic_relu():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("m", "n"), "float32")) -> R.Tensor(("m", "n"), "float32"):
            m = T.int64()
            n = T.int64()
            gv: R.Tensor((m, n), "float32") = R.nn.relu(x)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("m", "n"), "float32")) -> R.Tensor(("m", "n"), "float32"):
            m = T.int64()
            n = T.int64()
            gv = R.call_tir(Expected.relu, (x,), R.Tensor((m, n), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def relu(var_x: T.handle, var_compute: T.handle):
            T.func_attr({"tir.noalias": T.bool(True)})
            m, n = T.int64(), T.int64()
            x = T.match_buffer(var_x, (m, n))
            compute = T.match_buffer(var_compute, (m, n))
            for i0, i1 in T.grid(m, n):
                with T.block("compute"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T.reads(x[v_i0, v_i1])
                    T.writes(compute[v_i0, v_i1])
                    compute[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0))

    assert_structural_equal(relax.transform.LegalizeOps()(Before), Expected)


def test_dead_code_elimination():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            with R.dataflow():
                lv0 = R.add(x, x)
                unused = R.multiply(x, x)
                gv = R.exp(lv0)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            with R.dataflow():
                lv0 = R.add(x, x)
                gv = R.exp(lv0)
                R.output(gv)
            return gv

    assert_structural_equal(relax.transform.DeadCodeElimination()(Before), Expected)


def test_canonicalize_bindings():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            y = x
            z = y
            w = R.add(z, y)
            return w

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            w = R.add(x, x)
            return w

    after = relax.transform.CanonicalizeBindings()(Before)
    after = relax.transform.DeadCodeElimination()(after)
    assert_structural_equal(after, Expected)


def test_call_tir_rewrite_of_an_inplace_call():
    @I.ir_module
    class Before:
        @T.prim_func
        def add_inplace(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("T_add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = A[vi, vj] + B[vi, vj]

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            cls = Before
            gv = R.call_tir_inplace(cls.add_inplace, (x, y), inplace_indices=[0],
                                    out_sinfo=R.Tensor((2, 3), "float32"))
            return gv

    @I.ir_module
    class Expected:
        @T.prim_func
        def add_inplace(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
            for i, j in T.grid(2, 3):
                with T.block("T_add"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = A[vi, vj] + B[vi, vj]

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            cls = Expected
            _ = cls.add_inplace(x, y)  # no allocation: the kernel writes into x
            gv = x
            return gv

    assert_structural_equal(round_trip(relax.transform.CallTIRRewrite()(Before)), Expected)


def test_vm_builtin_lower_of_closures_and_print():
    @I.ir_module
    class Before:
        @R.function
        def lifted(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
                -> R.Tensor((4,), "float32"):
            return R.subtract(x, y)

        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            cls = Before
            clo = R.make_closure(cls.lifted, (x,))
            res = R.invoke_closure(clo, (y,), sinfo_args=R.Tensor((4,), "float32"))
            R.print(res, format="res = {}")
            return res

    @I.ir_module
    class Expected:
        @R.function
        def lifted(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
                -> R.Tensor((4,), "float32"):
            return R.subtract(x, y)

        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
                -> R.Tensor((4,), "float32"):
            cls = Expected
            clo: R.Callable((R.Tensor((4,), "float32"),), R.Tensor((4,), "float32")) = \
                R.call_packed("vm.builtin.make_closure", cls.lifted, x)
            res: R.Tensor((4,), "float32") = clo(y)
            _: R.Tuple() = R.call_packed("relax.run.print", R.str("res = {}"), res)
            return res

    assert_structural_equal(round_trip(relax.transform.VMBuiltinLower()(Before)), Expected)


def test_bind_params():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2,), "float32"), w: R.Tensor((2,), "float32")):
            y = R.multiply(x, w)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            y = R.multiply(x, R.const([1.5, -2.0], "float32"))
            return y

    w = rvm.nd.array(np.array([1.5, -2.0], "float32"))
    assert_structural_equal(relax.transform.BindParams("main", {"w": w})(Before), Expected)


def test_to_non_dataflow():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            with R.dataflow():
                lv = R.exp(x)
                gv = R.add(lv, x)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            lv = R.exp(x)
            gv = R.add(lv, x)
            return gv

    assert_structural_equal(relax.transform.ToNonDataflow()(Before), Expected)


def test_fold_constant():
    @I.ir_module
    class Before:
        @T.prim_func
        def addone(A: T.Buffer((2, 2), "float32"), B: T.Buffer((2, 2), "float32")):
            for i, j in T.grid(2, 2):
                with T.block("addone"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + T.float32(1)

        @R.function
        def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
            cls = Before
            c = R.const([[1.0, 2.0], [3.0, 4.0]], "float32")
            lv = R.call_tir(cls.addone, (c,), R.Tensor((2, 2), "float32"))
            gv = R.add(x, lv)
            return gv

    @I.ir_module
    class Expected:  # the kernel, called by nobody now, is dead code
        @R.function
        def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
            gv = R.add(x, R.const([[2.0, 3.0], [4.0, 5.0]], "float32"))
            return gv

    after = relax.transform.FoldConstant()(Before)
    after = relax.transform.CanonicalizeBindings()(after)
    after = relax.transform.DeadCodeElimination(["main"])(after)
    assert_structural_equal(after, Expected)
