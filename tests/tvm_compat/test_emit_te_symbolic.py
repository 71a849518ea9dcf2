"""emit_te with symbolic values, in TVM's test style: a TIR variable or an ``R.Prim(value=n)``
variable passed to the TE function becomes a kernel parameter fed by call_tir's tir_vars,
and the module runs."""
import numpy as np

import rvm
from rvm import relax, te, tir
from rvm.ir import assert_structural_equal
from rvm.script import ir as I, relax as R, tir as T


def _shift(A, offset):
    return te.compute(A.shape, lambda i: A[i + offset], name="B")


def test_emit_te_with_symbolic_arg():
    bb = relax.BlockBuilder()
    m = tir.Var("m", "int64")
    x = relax.Var("x", R.Tensor([10], "float32"))
    y = relax.Var("y", R.Shape([m]))
    with bb.function("main", [x, y]):
        bb.emit_func_output(bb.emit_te(_shift, x, m))

    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def _shift(A: T.Buffer((T.int64(10),), "float32"),
                   B: T.Buffer((T.int64(10),), "float32"), m: T.int64):
            T.func_attr({"tir.noalias": True})
            for i in range(T.int64(10)):
                with T.block("B"):
                    v_i = T.axis.spatial(T.int64(10), i)
                    T.reads(A[v_i + m])
                    T.writes(B[v_i])
                    B[v_i] = A[v_i + m]

        @R.function
        def main(x: R.Tensor((10,), dtype="float32"),
                 y: R.Shape(["m"])) -> R.Tensor((10,), dtype="float32"):
            m = T.int64()
            cls = Expected
            gv = R.call_tir(cls._shift, (x,), out_sinfo=R.Tensor((10,), dtype="float32"),
                            tir_vars=R.shape([m]))
            return gv

    assert_structural_equal(bb.get(), Expected)


def test_emit_te_with_prim_value_var_runs():
    def row(t, i):
        return te.compute([t.shape[1]], lambda j: t[i, j], name="row")

    i = tir.Var("i", "int64")
    A = relax.Var("A", R.Tensor([4, 3], "float32"))
    k = relax.Var("k", R.Prim(value=i))
    bb = relax.BlockBuilder()
    with bb.function("main", [A, k]):
        bb.emit_func_output(bb.emit_te(row, A, k))
    mod = bb.get()
    call = mod["main"].body.blocks[-1].bindings[-1].value
    assert [v.name_hint for v in call.args[2].values] == ["i"]  # tir_vars carries i
    vm = relax.VirtualMachine(relax.build(mod), rvm.cpu())
    a = np.arange(12, dtype="float32").reshape(4, 3)
    np.testing.assert_array_equal(vm["main"](a, 2).numpy(), a[2])


def test_shape_expr_values_count_as_passed():
    n = tir.Var("n", "int64")
    x = relax.Var("x", R.Tensor([8], "float32"))
    s = relax.Var("s", R.Shape([n]))

    def head(t, shape):
        return te.compute((2,), lambda j: t[j + shape[0]], name="head")

    bb = relax.BlockBuilder()
    with bb.function("main", [x, s]):
        bb.emit_func_output(bb.emit_te(head, x, relax.ShapeExpr([n])))
    kernel = bb.get()["head"]
    assert [p.name for p in kernel.params][-1] == "n"
