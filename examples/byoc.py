"""Bring your own codegen: offload the subgraphs a pattern table matches to a new codegen.

The whole codegen ("negsum": a fake accelerator computing -(a + b) on float32
tensors) is the pattern table, a runtime Module that saves itself into the
executable, its loader, and the function RunCodegen calls. Run:

    python examples/byoc.py [--work-dir DIR]

It offloads, builds, runs, exports, reloads the file in a fresh process and
runs it again there; the built-in codegens "ccompiler" and "examplejson" take
the same flow (get_patterns_with_prefix("ccompiler")).
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import rvm
from rvm import relax
from rvm.relax.backend import get_patterns_with_prefix, register_patterns
from rvm.relax.dpl import is_op, wildcard
from rvm.script import ir as I
from rvm.script import relax as R

# 1. Patterns: what the codegen takes. The name's prefix is the codegen's name.
register_patterns([("negsum.neg_add",
                    is_op("relax.negative")(is_op("relax.add")(wildcard(), wildcard())))])


# 2. The runtime module: one function per offloaded subgraph; saves itself as JSON.
class NegSumModule(rvm.runtime.Module):
    type_key = "negsum"

    def __init__(self, names):
        super().__init__()
        self.names = list(names)

    def _get_own_function(self, name):
        if name not in self.names:
            return None

        def run(a, b, out):  # destination passing: the VM allocates `out`
            np.negative(np.from_dlpack(a) + np.from_dlpack(b), out=np.from_dlpack(out))
        return run

    def _own_function_names(self):
        return self.names

    def save_to_bytes(self):
        return json.dumps(self.names).encode()


def load_negsum(data):  # loading only parses: nothing in the file runs here
    names = json.loads(data.decode())
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError("negsum: expected a JSON list of function names")
    return NegSumModule(names)


rvm.runtime.register_module_loader("negsum", load_negsum)


# 3. The codegen: RunCodegen hands it every function with Codegen="negsum".
@rvm.register_func("relax.ext.negsum")
def negsum_codegen(functions, options, constant_names):
    return [NegSumModule(f.get_attr("global_symbol") for f in functions)]


@I.ir_module
class Model:
    @R.function
    def main(a: R.Tensor((10, 10), "float32"), b: R.Tensor((10, 10), "float32")):
        with R.dataflow():
            n = R.negative(R.add(a, b))   # offloaded to negsum
            e = R.exp(n)                   # stays on the default path
            R.output(e)
        return e


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", default=tempfile.mkdtemp(prefix="rvm_byoc_"))
    path = pathlib.Path(parser.parse_args().work_dir) / "model.rvm"
    path.parent.mkdir(parents=True, exist_ok=True)
    mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("negsum"))(Model)
    mod = relax.transform.MergeCompositeFunctions()(mod)
    mod = relax.transform.RunCodegen()(mod)
    ex = relax.build(mod, target="c")
    print(ex.stats())
    a, b = np.ones((10, 10), "float32"), np.full((10, 10), 0.5, "float32")
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b).numpy()
    print("matches numpy:", np.allclose(out, np.exp(-(a + b))))
    ex.export_library(str(path))
    # A fresh process knows the type only once this file's loader is registered.
    script = (f"import runpy, numpy as np, rvm; runpy.run_path({__file__!r}); "
              f"ex = rvm.runtime.load_module({str(path)!r}); "
              "out = rvm.relax.VirtualMachine(ex, rvm.cpu())['main'](np.ones((10, 10), 'float32'),"
              " np.full((10, 10), 0.5, 'float32')).numpy(); "
              "print('reloaded in a fresh process:', np.allclose(out, np.exp(-1.5)))")
    subprocess.run([sys.executable, "-c", script], check=True)


if __name__ == "__main__":
    main()
