"""relax.build on modules already in lowered form (pipeline=None) and with a custom pipeline."""
import numpy as np
import pytest

import rvm
from rvm.driver.relax_build import build
from rvm.ir.module import IRModule
from rvm.relax.expr import Var
from rvm.relax.struct_info import ObjectStructInfo
from rvm.runtime.packed_func import remove_global_func
from rvm.ir.transform import module_pass
from rvm.vm.machine import VirtualMachine
from tests.codegen.vm.lowered import (
    add_kernel, alloc_storage, alloc_tensor, dps_add_module, extern, func, kill, rand, tensor,
)


def _extern_module(name, n=4, with_kernel=True):
    """main(x, y) calls ``name`` (by name, DPS) on a storage-backed output."""
    x, y = tensor("x", (n,)), tensor("y", (n,))
    s, out = Var("s", ObjectStructInfo()), tensor("out", (n,))
    u, k = Var("u", ObjectStructInfo()), Var("k", ObjectStructInfo())
    mod = IRModule()
    if with_kernel:
        mod.add("add", add_kernel(n))
    mod.add("main", func([x, y], [(s, alloc_storage(4 * n)), (out, alloc_tensor(s, 0, (n,))),
                                  (u, extern(name, x, y, out)), (k, kill(s))], out, "main"))
    return mod


@pytest.mark.parametrize("target", ["c", "python", "llvm"])
def test_build_lowered_module(target):
    ex = build(dps_add_module(8), target=target, pipeline=None)
    assert ex.kernel_libs and ex.function_info("main").param_names == ("x", "y")
    a, b = rand(8), rand(8, seed=1)
    np.testing.assert_allclose(VirtualMachine(ex, rvm.cpu())["main"](a, b).numpy(), a + b,
                               rtol=1e-6)


def test_python_target_carries_reference_kernels():
    ex = build(dps_add_module(4), target="python", pipeline=None)
    assert ex.kernel_libs[0].type_key == "python_kernels"


def test_unknown_target_is_rejected():
    with pytest.raises(ValueError, match="unknown target"):
        build(dps_add_module(4), target="cuda", pipeline=None)


def test_module_without_kernels_has_no_kernel_library():
    x = tensor("x", (2,))
    ex = build(IRModule({"main": func([x], [], x, "main")}), pipeline=None)
    assert ex.kernel_libs == []


def test_pipeline_may_be_a_pass():
    ran = []

    @module_pass(name="Record")
    def record(mod, ctx):
        ran.append(sorted(gv.name_hint for gv in mod.functions))
        return mod

    build(dps_add_module(4), pipeline=record)
    assert ran == [["add", "main"]]


def test_extern_name_resolves_to_own_kernel_before_registry():
    rvm.register_func("add", lambda *args: (_ for _ in ()).throw(AssertionError("registry")),
                      override=True)
    try:
        ex = build(_extern_module("add"), target="c", pipeline=None)
        a, b = rand(4), rand(4, seed=2)
        np.testing.assert_allclose(VirtualMachine(ex)["main"](a, b).numpy(), a + b, rtol=1e-6)
    finally:
        remove_global_func("add")


def test_environment_function_gets_zero_copy_arrays():
    seen = {}

    def env_add(x, y, out):
        seen["out_type"] = type(out).__name__
        view = np.from_dlpack(out)
        np.add(np.from_dlpack(x), np.from_dlpack(y), out=view)
        seen["view"] = view

    rvm.register_func("test.driver.env_add", env_add, override=True)
    ex = build(_extern_module("test.driver.env_add", with_kernel=False), pipeline=None)
    a, b = rand(4), rand(4, seed=3)
    out = VirtualMachine(ex)["main"](a, b)
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)
    assert seen["out_type"] == "NDArray"
    seen["view"][0] = 42.0  # the view the function wrote through is the returned tensor
    assert out.numpy()[0] == 42.0


def test_name_found_nowhere_fails_at_vm_construction():
    ex = build(_extern_module("env.no_such_function", with_kernel=False), pipeline=None)
    with pytest.raises(ValueError, match="env.no_such_function"):
        VirtualMachine(ex, rvm.cpu())


def test_input_checks():
    with pytest.raises(TypeError, match="IRModule or a relax Function"):
        build("not a module")


def test_build_accepts_a_single_relax_function():
    x = tensor("x", (2,))
    ex = build(func([x], [], x, "main"), pipeline=None)
    assert ex.vm_function_names() == ["main"]
