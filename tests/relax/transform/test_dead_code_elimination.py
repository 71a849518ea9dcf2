"""DeadCodeElimination: unused pure bindings and unreachable functions are removed."""
from rvm.ir.base import assert_structural_equal
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform.dead_code_elimination import DeadCodeElimination


def test_unused_pure_bindings_are_removed_transitively():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                a = R.add(x, x)
                b = R.multiply(a, a)  # only feeds the dead c
                c = R.nn.relu(b)
                d = R.multiply(x, x)
                R.output(d)
            return d

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                d = R.multiply(x, x)
                R.output(d)
            return d

    assert_structural_equal(DeadCodeElimination()(Before), Expected)


def test_impure_calls_are_kept():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor((2, 3), "float32")):
            unused = R.call_packed("env.log", x, sinfo_args=R.Object)
            y = R.add(x, x)
            return x

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor((2, 3), "float32")):
            unused = R.call_packed("env.log", x, sinfo_args=R.Object)
            return x

    assert_structural_equal(DeadCodeElimination()(Before), Expected)


def test_unreachable_private_functions_are_removed():
    @I.ir_module
    class Before:
        @R.function(private=True)
        def used(x: R.Tensor((2,), "float32")):
            return x

        @R.function(private=True)
        def unused(x: R.Tensor((2,), "float32")):
            return x

        @R.function
        def main(x: R.Tensor((2,), "float32")):
            cls = Before
            y = cls.used(x)
            return y

    after = DeadCodeElimination()(Before)
    assert sorted(gv.name_hint for gv in after.get_global_vars()) == ["main", "used"]
    only_used = DeadCodeElimination(entry_functions=["used"])(Before)
    assert [gv.name_hint for gv in only_used.get_global_vars()] == ["used"]


def test_nothing_dead_returns_the_module():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            y = R.add(x, x)
            return y

    assert DeadCodeElimination()(Before) is Before


def test_kernels_called_by_name_are_reachable():
    from rvm.ir.module import IRModule
    from rvm.te.create_prim_func import create_prim_func
    from rvm.te.operation import compute, placeholder

    a = placeholder((2,), name="A")
    b = compute((2,), lambda i: a[i] + 1.0, name="B")
    kernel = create_prim_func([a, b]).without_attr("global_symbol")

    @I.ir_module
    class Calls:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            y = R.call_dps_packed("add_one", (x,), R.Tensor((2,), "float32"))
            return y

    mod = IRModule({"main": Calls["main"], "add_one": kernel, "unused": kernel})
    after = DeadCodeElimination()(mod)
    assert sorted(gv.name_hint for gv in after.get_global_vars()) == ["add_one", "main"]


def test_module_without_external_functions_keeps_its_relax_functions():
    """A hand-built IRModule({"main": f}) has no global_symbol anywhere; main must survive."""
    import numpy as np

    import rvm
    from rvm.driver.relax_build import build
    from rvm.ir.module import IRModule
    from rvm.relax.binding import SeqExpr
    from rvm.relax.expr import Var
    from rvm.relax.function import Function
    from rvm.relax.struct_info import TensorStructInfo
    from rvm.vm.machine import VirtualMachine

    x = Var("x", TensorStructInfo((3,), "float32"))
    main = Function([x], SeqExpr([], x), TensorStructInfo((3,), "float32"))
    assert main.get_attr("global_symbol") is None
    mod = IRModule({"main": main})
    assert [gv.name_hint for gv in DeadCodeElimination()(mod).get_global_vars()] == ["main"]
    vm = VirtualMachine(build(mod), rvm.cpu())
    np.testing.assert_array_equal(vm["main"](np.ones(3, "float32")).numpy(), np.ones(3))
