"""Seed 002, bring your own codegen: the add -> subtract -> multiply subgraph on 10x10
float32 offloaded to the C-source codegen and to the ExampleJSON codegen, built, run,
exported, reloaded in a fresh process and run again; modules mixing offloaded and default
operators; the external modules in the executable's listings."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.backend import get_patterns_with_prefix
from rvm.script import ir as I
from rvm.script import relax as R

CODEGENS = ("ccompiler", "examplejson")


@I.ir_module
class Subgraph:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             c: R.Tensor((10, 10), "float32"), d: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            x = R.add(a, b)
            y = R.subtract(x, c)
            z = R.multiply(y, d)
            R.output(z)
        return z


@I.ir_module
class Mixed:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32"),
             row: R.Tensor((10,), "float32")):
        with R.dataflow():
            x = R.add(a, b)            # offloaded
            e = R.exp(x)               # no codegen takes exp: default path
            y = R.multiply(e, b)       # offloaded (a region of its own: exp sits between)
            s = R.subtract(y, row)     # broadcasting: the check rejects it, default path
            R.output(s)
        return s


def _inputs(count, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((10, 10)).astype("float32") for _ in range(count)]


def offload(mod, codegen):
    """The BYOC flow of seed 002: partition, merge the regions, generate."""
    mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix(codegen))(mod)
    mod = relax.transform.MergeCompositeFunctions()(mod)
    return relax.transform.RunCodegen()(mod)


@pytest.mark.parametrize("codegen", CODEGENS)
def test_seed_subgraph_runs_exports_and_reloads_in_a_fresh_process(codegen, tmp_path):
    args = _inputs(4)
    expected = (args[0] + args[1] - args[2]) * args[3]
    ex = relax.build(offload(Subgraph, codegen), target="c")
    [module] = ex.imported_modules
    assert module.type_key == {"ccompiler": "c", "examplejson": "examplejson"}[codegen]
    vm = relax.VirtualMachine(ex, rvm.cpu())
    np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-6)
    path = tmp_path / "subgraph.rvm"
    ex.export_library(str(path))
    np.save(tmp_path / "args.npy", np.stack(args))
    script = textwrap.dedent(f"""
        import numpy as np, rvm
        from rvm import relax
        # A C-source module is hand-written native code: loading it needs trust_native.
        ex = rvm.runtime.load_module({str(path)!r}, trust_native=True)
        print(ex.stats())
        args = np.load({str(tmp_path / "args.npy")!r})
        out = relax.VirtualMachine(ex, rvm.cpu())["main"](*args).numpy()
        np.save({str(tmp_path / "out.npy")!r}, out)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"import {module.type_key}: fused_relax_add_relax_subtract_relax_multiply" in \
        done.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, rtol=1e-6)


@pytest.mark.parametrize("codegen", CODEGENS)
def test_mixed_module_keeps_unsupported_and_rejected_ops_on_the_default_path(codegen):
    a, b = _inputs(2)
    row = np.linspace(-1, 1, 10).astype("float32")
    mod = offload(Mixed, codegen)
    text = mod.script()
    assert text.count("R.call_dps_packed") == 2  # add and multiply
    assert "R.exp(" in text and "R.subtract(" in text
    ex = relax.build(mod, target="c")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b, row).numpy()
    np.testing.assert_allclose(out, np.exp(a + b) * b - row, rtol=1e-5)


def test_listings_show_the_external_modules():
    ex = relax.build(offload(Subgraph, "ccompiler"), target="c")
    text = ex.as_text()
    assert "@fused_relax_add_relax_subtract_relax_multiply = packed function" in text
    assert "import c: fused_relax_add_relax_subtract_relax_multiply" in text
    assert "modules: 0 kernel libraries, 1 imported\n  import c: " \
           "fused_relax_add_relax_subtract_relax_multiply" in ex.stats()


def test_an_unregistered_module_type_is_refused_with_its_name(tmp_path):
    class Accel(rvm.runtime.Module):
        type_key = "test_accel"

        def _get_own_function(self, name):
            if name != "accel_double":
                return None
            return lambda x, out: np.multiply(np.from_dlpack(x), 2, out=np.from_dlpack(out))

        def _own_function_names(self):
            return ["accel_double"]

        def save_to_bytes(self):
            return b"double"

    rvm.runtime.register_module_loader("test_accel", lambda data: Accel())
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        out = bb.emit(relax.call_dps_packed("accel_double", (x,),
                                            relax.TensorStructInfo((4,), "float32")))
        bb.emit_func_output(out)
    mod = bb.get().with_attr("external_mods", [Accel()])
    ex = relax.build(mod, target="c")
    arr = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(relax.VirtualMachine(ex, rvm.cpu())["main"](arr).numpy(),
                                  arr * 2)
    path = tmp_path / "accel.rvm"
    ex.export_library(str(path))
    reloaded = rvm.runtime.load_module(str(path))  # this process knows the type
    assert reloaded.imported_modules[0].type_key == "test_accel"
    script = f"import rvm; rvm.runtime.load_module({str(path)!r})"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert "no loader for runtime module type 'test_accel'" in done.stderr


def test_composites_without_codegen_build_on_the_default_path_and_codegen_functions_ask_for_it():
    args = _inputs(4)
    fused = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("ccompiler"))(Subgraph)
    ex = relax.build(fused, target="c")  # composite functions fuse into one kernel instead
    assert not ex.imported_modules
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](*args).numpy()
    np.testing.assert_allclose(out, (args[0] + args[1] - args[2]) * args[3], rtol=1e-6)
    merged = relax.transform.MergeCompositeFunctions()(fused)
    with pytest.raises(ValueError, match="marked for codegen 'ccompiler'; run "
                                         r"relax.transform.RunCodegen\(\) before building"):
        relax.build(merged, target="c")
