"""Seed 002 (bring your own codegen): the C source the C codegen generates for the
add -> subtract -> multiply subgraph, compiled at build time against the headers installed
with the package through ``module.csource_module_create(code, "cc")``, and a runtime module
type loaded through ``module.loadbinary_<type>`` as the seed registers it.

The seed's listings are TVM's with ``tvm`` replaced by ``rvm``; the blog they come from lost
the macros' line continuations, straight quotes and the names of three ``#include``s, put
back here (the headers as what the code uses: <cstdint>, <cstdlib>, <cstring>)."""
import pathlib
import shutil
import subprocess
import sys
import textwrap
import tomllib
import warnings

import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.backend import get_patterns_with_prefix
from rvm.runtime.module import ModuleLoaderClash
from rvm.script import ir as I
from rvm.script import relax as R

# The seed's sources are C++: the C compiler driver compiles them given the C++ compiler.
needs_cxx = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                               reason="no C++ compiler installed")

# The seed's "code we want to generate" for the subgraph gcc_0.
SEED_SOURCE = r"""
#include <rvm/runtime/c_runtime_api.h>
#include <rvm/runtime/packed_func.h>
#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define GCC_BINARY_OP_1D(p_ID_, p_OP_, p_DIM1_)         \
  extern "C" void p_ID_(float* a, float* b, float* out) { \
    for (int64_t i = 0; i < p_DIM1_; ++i) {               \
      out[i] = a[i] p_OP_ b[i];                           \
    }                                                     \
  }

#define GCC_BINARY_OP_2D(p_ID_, p_OP_, p_DIM1_, p_DIM2_)  \
  extern "C" void p_ID_(float* a, float* b, float* out) { \
    for (int64_t i = 0; i < p_DIM1_; ++i) {               \
      for (int64_t j = 0; j < p_DIM2_; ++j) {             \
        int64_t k = i * p_DIM2_ + j;                      \
        out[k] = a[k] p_OP_ b[k];                         \
      }                                                   \
    }                                                     \
  }

// Note 1
GCC_BINARY_OP_2D(gcc_0_0, *, 10, 10);
GCC_BINARY_OP_2D(gcc_0_1, -, 10, 10);
GCC_BINARY_OP_2D(gcc_0_2, +, 10, 10);

// Note 2
extern "C" void gcc_0_(float* gcc_input0, float* gcc_input1,
                       float* gcc_input2, float* gcc_input3, float* out) {
  float* buf_0 = (float*)malloc(4 * 100);
  float* buf_1 = (float*)malloc(4 * 100);
  gcc_0_2(gcc_input0, gcc_input1, buf_0);
  gcc_0_1(buf_0, gcc_input2, buf_1);
  gcc_0_0(buf_1, gcc_input3, out);
  free(buf_0);
  free(buf_1);
}

// Note 3
extern "C" int gcc_0_wrapper(DLTensor* arg0, DLTensor* arg1, DLTensor* arg2,
                             DLTensor* arg3, DLTensor* out) {
  gcc_0_(static_cast<float*>(arg0->data), static_cast<float*>(arg1->data),
         static_cast<float*>(arg2->data), static_cast<float*>(arg3->data),
         static_cast<float*>(out->data));
  return 0;
}
RVM_DLL_EXPORT_TYPED_FUNC(gcc_0, gcc_0_wrapper);
"""


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


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((10, 10)).astype("float32") for _ in range(4)]


@needs_cxx
def test_the_seeds_c_source_module_runs():
    pf = rvm.get_global_func("module.csource_module_create")
    mod = pf(SEED_SOURCE, "cc")
    assert mod.format == "cc" and list(mod.function_names()) == ["gcc_0"]
    a, b, c, d = _inputs()
    out = rvm.nd.empty((10, 10), "float32")
    assert mod["gcc_0"](a, b, c, d, out) == 0
    np.testing.assert_allclose(out.numpy(), (a + b - c) * d, rtol=1e-6)


@needs_cxx
def test_typed_export_checks_its_arguments():
    mod = rvm.runtime.csource_module_create(SEED_SOURCE, "cc")
    a = rvm.nd.empty((10, 10), "float32")
    with pytest.raises(rvm.RVMError, match="gcc_0: expects 5 arguments, got 2"):
        mod["gcc_0"](a, a)
    with pytest.raises(rvm.RVMError, match=r"gcc_0: argument 2 expects a tensor \(DLTensor\* "
                                           r"or NDArray\), got type code 1"):
        mod["gcc_0"](a, a, 3, a, a)


@needs_cxx
def test_csource_module_create_refuses_what_it_cannot_build():
    create = rvm.get_global_func("module.csource_module_create")
    with pytest.raises(ValueError, match="format 'cuda' is not supported; expected one of "
                                         r"\('c', 'cc'\)"):
        create(SEED_SOURCE, "cuda")
    with pytest.raises(ValueError, match="no func_names given and the source exports no "
                                         "function with RVM_DLL_EXPORT_TYPED_FUNC"):
        create("int f(void) { return 0; }", "c")
    with pytest.raises(rvm.runtime.compiler.CompileError,
                       match=r"RVM_DLL_EXPORT_TYPED_FUNC\(gcc_0\) needs C\+\+"):
        # The typed export is C++: in a C source it does not compile.
        create(SEED_SOURCE.replace("extern \"C\" ", "").replace("static_cast<float*>", "(float*)")
               .replace("<cstdint>", "<stdint.h>").replace("<cstring>", "<string.h>")
               .replace("<cstdlib>", "<stdlib.h>"), "c")


def test_headers_are_package_data():
    """Every header under rvm/include is matched by pyproject's package-data, so a wheel and
    an install carry what C sources include."""
    root = pathlib.Path(rvm.__file__).resolve().parent
    pyproject = root.parent / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not a source tree: the installed package is checked by the next test")
    globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["rvm"]
    headers = {p.relative_to(root) for p in (root / "include").rglob("*.h")}
    covered = {p.relative_to(root) for g in globs for p in root.glob(g)}
    assert {pathlib.Path("include/rvm/c_runtime_api.h"),
            pathlib.Path("include/rvm/runtime/packed_func.h"),
            pathlib.Path("include/dlpack/dlpack.h")} <= headers
    assert headers == covered, sorted(map(str, headers - covered))


# The seed's codegen flow from a temporary directory, against the installed package: a
# codegen registered as relax.ext.ccompiler returns module.csource_module_create(code, "cc"),
# relax.build compiles it, the executable runs, is exported, loaded back and runs again.
_BUILD_SCRIPT = textwrap.dedent('''
    import pathlib, sys
    import numpy as np
    import rvm
    from rvm import relax
    from rvm.relax.backend import get_patterns_with_prefix
    from rvm.script import ir as I, relax as R

    package = pathlib.Path(rvm.__file__).resolve().parent
    assert not str(package).startswith(str(pathlib.Path.cwd())), package
    include = rvm.runtime.find_include_path()
    assert include == [str(package / "include")], include
    assert (package / "include" / "rvm" / "runtime" / "packed_func.h").is_file()
    source = pathlib.Path(sys.argv[1]).read_text()

    def CCompiler(functions, options=None, constant_names=None):
        # the seed's CSourceCodegen: the code of each subgraph under its symbol
        pf = rvm.get_global_func("module.csource_module_create")
        symbol = functions[0].get_attr("global_symbol")
        return [pf(source.replace("gcc_0", symbol), "cc")]
    rvm.register_func("relax.ext.ccompiler", CCompiler, override=True)

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

    mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("ccompiler"))(Subgraph)
    mod = relax.transform.MergeCompositeFunctions()(mod)
    mod = relax.transform.RunCodegen()(mod)
    ex = relax.build(mod, target="c")
    [module] = ex.imported_modules
    assert module.type_key == "c" and module.format == "cc", module
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal((10, 10)).astype("float32") for _ in range(4))
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b, c, d).numpy()
    np.testing.assert_allclose(out, (a + b - c) * d, rtol=1e-6)
    ex.export_library("seed.rvm")
    loaded = rvm.runtime.load_module("seed.rvm", trust_native=True)
    again = relax.VirtualMachine(loaded, rvm.cpu())["main"](a, b, c, d).numpy()
    np.testing.assert_array_equal(again, out)
    print("ran", module.format, sorted(module.function_names()))
''')


@needs_cxx
def test_seed_codegen_builds_against_the_installed_headers(tmp_path):
    (tmp_path / "seed.cc").write_text(SEED_SOURCE)
    (tmp_path / "build.py").write_text(_BUILD_SCRIPT)
    done = subprocess.run([sys.executable, "build.py", "seed.cc"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ran cc ['fused_relax_add_relax_subtract_relax_multiply']" in done.stdout
    assert (tmp_path / "seed.rvm").is_file()


class ExampleJsonModule(rvm.runtime.Module):
    """The seed's customized runtime: runs ExampleJSON subgraphs (add, sub, mul)."""

    type_key = "examplejson"

    def __init__(self, graph_json):
        super().__init__()
        self.graph_json_ = graph_json
        self.graph_ = {}
        self.ParseJson(graph_json)

    def ParseJson(self, json):
        curr_subgraph = None
        for line in json.split("\n"):
            tokens = line.split()
            if not tokens:
                continue
            if len(tokens) == 1:
                curr_subgraph = tokens[0]
                self.graph_[curr_subgraph] = []
                continue
            self.graph_[curr_subgraph].append(tokens)

    def _get_own_function(self, name):
        if name not in self.graph_:
            return None

        def run(*args):
            data_entry = {}
            inputs = 0
            for tokens in self.graph_[name]:
                if tokens[0] == "input":
                    data_entry[int(tokens[1])] = np.from_dlpack(args[inputs]).copy()
                    inputs += 1
                    continue
                cut = tokens.index("shape:")
                x, y = (data_entry[int(t)] for t in tokens[3:cut])
                op = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[tokens[0]]
                data_entry[int(tokens[1])] = op(x, y)
                last = int(tokens[1])
            np.from_dlpack(args[-1])[...] = data_entry[last]
            ExampleJsonModule.runs += 1
        return run

    def _own_function_names(self):
        return list(self.graph_)

    def save_to_bytes(self):
        return self.graph_json_.encode()

    runs = 0


def _examplejson_executable(tmp_path):
    mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("examplejson"))(Subgraph)
    mod = relax.transform.RunCodegen()(relax.transform.MergeCompositeFunctions()(mod))
    path = tmp_path / "examplejson.rvm"
    relax.build(mod, target="c").export_library(str(path))
    return path


def test_loadbinary_registration_wins_and_the_clash_is_reported(tmp_path):
    path = _examplejson_executable(tmp_path)
    loaded = []

    def LoadFromBinary(strm):
        loaded.append(strm)
        return ExampleJsonModule(strm.decode())
    rvm.register_func("module.loadbinary_examplejson", LoadFromBinary)
    try:
        with pytest.warns(ModuleLoaderClash, match="runtime module type 'examplejson' is loaded "
                          "by the global function 'module.loadbinary_examplejson', not by "
                          "rvm's built-in loader"):
            ex = rvm.runtime.load_module(str(path))
    finally:
        rvm.runtime.remove_global_func("module.loadbinary_examplejson")
    [module] = ex.imported_modules
    assert isinstance(module, ExampleJsonModule) and loaded
    a, b, c, d = _inputs(1)
    before = ExampleJsonModule.runs
    out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b, c, d).numpy()
    np.testing.assert_allclose(out, (a + b - c) * d, rtol=1e-6)
    assert ExampleJsonModule.runs == before + 1
    # without the registration the built-in loader is back
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builtin = rvm.runtime.load_module(str(path)).imported_modules[0]
    assert not isinstance(builtin, ExampleJsonModule)


def test_runtime_module_loadbinary_of_a_new_type(tmp_path):
    class Accel(ExampleJsonModule):
        type_key = "seed_accel"

    mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("examplejson"))(Subgraph)
    mod = relax.transform.RunCodegen()(relax.transform.MergeCompositeFunctions()(mod))
    [builtin] = mod.attrs["external_mods"]
    mod = mod.with_attr("external_mods", [Accel(builtin.get_source())])
    path = tmp_path / "accel.rvm"
    relax.build(mod, target="c").export_library(str(path))
    with pytest.raises(rvm.bytecode.ExecutableFormatError,
                       match="no loader for runtime module type 'seed_accel'.*register the global "
                             "function 'runtime.module.loadbinary_seed_accel'"):
        rvm.runtime.load_module(str(path))
    rvm.register_func("runtime.module.loadbinary_seed_accel", lambda b: Accel(b.decode()))
    rvm.register_func("module.loadbinary_seed_accel", lambda b: ExampleJsonModule(b.decode()))
    try:
        with pytest.warns(ModuleLoaderClash, match="'runtime.module.loadbinary_seed_accel', "
                          "not by module.loadbinary_seed_accel"):
            ex = rvm.runtime.load_module(str(path))
        rvm.runtime.remove_global_func("module.loadbinary_seed_accel")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ex = rvm.runtime.load_module(str(path))
        assert type(ex.imported_modules[0]) is Accel
        a, b, c, d = _inputs(2)
        out = relax.VirtualMachine(ex, rvm.cpu())["main"](a, b, c, d).numpy()
        np.testing.assert_allclose(out, (a + b - c) * d, rtol=1e-6)
        rvm.register_func("runtime.module.loadbinary_seed_accel", lambda b: "not a module",
                          override=True)
        with pytest.raises(rvm.bytecode.ExecutableFormatError,
                           match="'runtime.module.loadbinary_seed_accel' must return an "
                                 "rvm.runtime.Module, got str"):
            rvm.runtime.load_module(str(path))
    finally:
        for name in ("runtime.module.loadbinary_seed_accel", "module.loadbinary_seed_accel"):
            if rvm.get_global_func(name, allow_missing=True) is not None:
                rvm.runtime.remove_global_func(name)


SUBGRAPH_0 = """subgraph_0
input 0 10 10
input 1 10 10
input 2 10 10
input 3 10 10
add 4 inputs: 0 1 shape: 10 10
sub 5 inputs: 4 2 shape: 10 10
mul 6 inputs: 5 3 shape: 10 10
"""


@pytest.fixture
def seed_examplejson_globals():
    """The seed's registrations of its ExampleJSON runtime, removed after the test."""
    def Create(path):
        with open(path) as filep:
            return ExampleJsonModule(filep.read())
    names = {"module.examplejson_module_create": lambda code: ExampleJsonModule(code),
             "module.loadfile_examplejson": Create}
    for name, func in names.items():
        rvm.register_func(name, func)
    yield
    for name in names:
        rvm.runtime.remove_global_func(name)


def test_examplejson_module_from_a_file_and_from_code(tmp_path, seed_examplejson_globals):
    path = tmp_path / "mysubgraph.examplejson"
    path.write_text(SUBGRAPH_0)
    a, b, c, d = _inputs(3)
    for mod in (rvm.runtime.load_module(str(path), "examplejson"),
                rvm.runtime.load_module(str(path)),  # the extension names the format
                rvm.get_global_func("module.examplejson_module_create")(SUBGRAPH_0)):
        assert isinstance(mod, ExampleJsonModule)
        out = rvm.nd.empty((10, 10), "float32")
        mod["subgraph_0"](a, b, c, d, out)
        np.testing.assert_allclose(out.numpy(), (a + b - c) * d, rtol=1e-6)


def test_load_module_by_format_refuses_what_it_cannot_load(tmp_path):
    path = tmp_path / "mysubgraph.examplejson"
    path.write_text(SUBGRAPH_0)
    with pytest.raises(ValueError, match="load_module: no loader for format 'examplejson': "
                                         "register the global function "
                                         "'runtime.module.loadfile_examplejson'"):
        rvm.runtime.load_module(str(path), "examplejson")
    with pytest.raises(ValueError, match="is not a known module file"):
        rvm.runtime.load_module(str(path))
    rvm.register_func("runtime.module.loadfile_examplejson", lambda p: open(p).read())
    try:
        with pytest.raises(TypeError, match="'runtime.module.loadfile_examplejson' must return "
                                            "an rvm.runtime.Module, got str"):
            rvm.runtime.load_module(str(path), "examplejson")
    finally:
        rvm.runtime.remove_global_func("runtime.module.loadfile_examplejson")


def test_register_module_loader_over_a_builtin_is_reported(tmp_path):
    from rvm.runtime import module as runtime_module
    path = _examplejson_executable(tmp_path)
    builtin = runtime_module._LOADERS["examplejson"]
    try:
        with pytest.warns(ModuleLoaderClash, match="runtime module type 'examplejson': your "
                                                   "loader replaces rvm's built-in loader"):
            rvm.runtime.register_module_loader(
                "examplejson", lambda data: ExampleJsonModule(bytes(data).decode()))
        [module] = rvm.runtime.load_module(str(path)).imported_modules
        assert isinstance(module, ExampleJsonModule)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a loader of the user's own type: no clash
            rvm.runtime.register_module_loader("seed_own_type", lambda data: None)
    finally:
        runtime_module._LOADERS["examplejson"] = builtin
        runtime_module._LOADER_ORIGINS["examplejson"] = "internal"
