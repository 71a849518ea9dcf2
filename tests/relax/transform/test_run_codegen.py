"""RunCodegen: Codegen functions go to relax.ext.<name>; their calls become call_dps_packed of
the modules' functions, carried in the module's external_mods (Before/Expected)."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.ir.base import assert_structural_equal
from rvm.runtime.module import Module
from rvm.script import ir as I
from rvm.script import relax as R
from rvm.relax.transform import RunCodegen


class NegateModule(Module):
    """A runtime module computing out = -(a + b) for each of its functions."""

    type_key = "test_negate"

    def __init__(self, names):
        super().__init__()
        self.names = list(names)

    def _get_own_function(self, name):
        if name not in self.names:
            return None

        def run(a, b, out):
            np.negative(np.from_dlpack(a) + np.from_dlpack(b), out=np.from_dlpack(out))
        return run

    def _own_function_names(self):
        return self.names


CALLS = []


@rvm.register_func("relax.ext.test_negate", override=True)
def _negate_codegen(functions, options, constant_names):
    CALLS.append(([f.get_attr("global_symbol") for f in functions], dict(options)))
    return [NegateModule(f.get_attr("global_symbol") for f in functions)]


@I.ir_module
class Before:
    @R.function
    def negate_sum(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")):
        R.func_attr({"Codegen": "test_negate"})
        with R.dataflow():
            s = R.add(a, b)
            n = R.negative(s)
            R.output(n)
        return n

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        cls = Before
        with R.dataflow():
            n = cls.negate_sum(x, y)
            e = R.exp(n)
            R.output(e)
        return e


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            n = R.call_dps_packed("negate_sum", (x, y), out_sinfo=R.Tensor((4,), "float32"))
            e = R.exp(n)
            R.output(e)
        return e


def _without_external_mods(mod):
    out = mod.with_attr("external_mods", None)
    out.attrs.pop("external_mods")
    return out


def test_codegen_functions_become_calls_of_external_modules():
    CALLS.clear()
    out = RunCodegen({"test_negate": {"level": 2}})(Before)
    assert_structural_equal(_without_external_mods(out), Expected)
    [module] = out.get_attr("external_mods")
    assert isinstance(module, NegateModule) and module.names == ["negate_sum"]
    assert CALLS == [(["negate_sum"], {"level": 2})]
    ex = relax.build(out, target="c")
    x, y = np.arange(4, dtype="float32"), np.ones(4, "float32")
    res = relax.VirtualMachine(ex, rvm.cpu())["main"](x, y).numpy()
    np.testing.assert_allclose(res, np.exp(-(x + y)), rtol=1e-6)


def test_a_module_without_codegen_functions_is_unchanged():
    assert RunCodegen()(Expected) is Expected


@I.ir_module
class Unknown:
    @R.function
    def offloaded(a: R.Tensor((4,), "float32")):
        R.func_attr({"Codegen": "no_such_codegen"})
        return a

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Unknown
        y = cls.offloaded(x)
        return y


def test_an_unregistered_codegen_is_named():
    with pytest.raises(ValueError, match=r"no codegen 'no_such_codegen'.*"
                                         r"'relax.ext.no_such_codegen' is not registered.*"
                                         r"ccompiler.*examplejson"):
        relax.transform.RunCodegen()(Unknown)


def test_a_codegen_must_return_modules_with_the_functions():
    rvm.register_func("relax.ext.test_bad", lambda funcs, opts, consts: ["source"],
                      override=True)
    rvm.register_func("relax.ext.test_empty", lambda funcs, opts, consts: [NegateModule([])],
                      override=True)
    for name, error, message in (("test_bad", TypeError, "returned a str"),
                                 ("test_empty", ValueError, "lack the functions offloaded")):
        func = Unknown["offloaded"].with_fields(attrs={"Codegen": name,
                                                       "global_symbol": "offloaded"})
        mod = Unknown.copy()
        mod.update_func(mod.get_global_var("offloaded"), func)
        with pytest.raises(error, match=message):
            RunCodegen()(mod)
