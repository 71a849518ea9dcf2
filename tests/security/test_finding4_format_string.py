"""Finding 4: R.print / R.assert_op formatted the file's string with ``str.format``, so a
field such as ``{0.vm.__class__.__init__.__globals__[np]...os.environ[SECRET]}`` read any
attribute reachable from a value (here an environment variable); and a file's function
table could call any registered global, rvm's compiler functions included.

Now messages use the restricted formatter (positional fields only) and a file loaded
without an allow-list may call the VM builtins and the user's own registrations; rvm's
internal globals are refused at load, naming them."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rvm import relax
from rvm.bytecode.builder import ExecBuilder
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741
from tests.security.attack import ENGINES, run_untrusted

SECRET = "s3cr3t-value-4f9a"
LEAK = "{0.vm.__class__.__init__.__globals__[np]._pytesttester.os.environ[SECRET]}"


def _file(tmp_path, build, name="attack.rvm"):
    ib = ExecBuilder()
    with ib.function("main", num_inputs=1):
        build(ib)
    path = tmp_path / name
    path.write_bytes(ib.get().save_to_bytes())
    return path


def _leaking_print(ib):
    ib.emit_call("relax.run.print", args=[LEAK, ib.f("main")], dst=ib.r(1))
    ib.emit_ret(ib.r(0))


def _leaking_assert(ib):
    ib.emit_call("relax.run.assert_op", args=[False, LEAK, ib.f("main")], dst=ib.r(1))
    ib.emit_ret(ib.r(0))


def _calling(name):
    def build(ib):
        ib.emit_call(name, args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    return build


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("build", [_leaking_print, _leaking_assert], ids=["print", "assert"])
def test_the_format_string_cannot_read_the_environment(tmp_path, engine, build):
    path = _file(tmp_path, build)
    result = run_untrusted(path, [np.float32(1)], engine=engine, env={"SECRET": SECRET})
    assert SECRET not in result.stdout + result.stderr
    assert result.returncode == 4, result.stdout + result.stderr
    assert "RUN-ERROR ValueError" in result.stdout
    assert "is not allowed: only positional fields" in result.stdout


_RUNNER = textwrap.dedent("""
    import sys, numpy as np, rvm
    from rvm import relax
    import rvm.codegen.byoc  # a process that compiles has rvm's codegens registered
    path, engine, allow = sys.argv[1], sys.argv[2], sys.argv[3]
    rvm.register_func("env.double", lambda x: x * 2)  # the user's environment function
    try:
        ex = rvm.runtime.load_module(path, allow=None if allow == "-" else allow.split(","))
    except Exception as err:
        print("LOAD-ERROR", type(err).__name__, err)
        sys.exit(3)
    print("RAN", relax.VirtualMachine(ex, rvm.cpu(), engine=engine)["main"](21))
""")


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ENV = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _run_with_env(path, engine, allow="-"):
    return subprocess.run([sys.executable, "-c", _RUNNER, str(path), engine, allow],
                          capture_output=True, text=True, timeout=60, env=_ENV)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_compiler_global_is_refused_at_load_naming_it(tmp_path, engine):
    result = _run_with_env(_file(tmp_path, _calling("relax.ext.ccompiler")), engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "LOAD-ERROR ExecutableFormatError" in result.stdout
    assert "'relax.ext.ccompiler': it is one of rvm's internal functions" in result.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_a_user_registered_env_function_still_works(tmp_path, engine):
    result = _run_with_env(_file(tmp_path, _calling("env.double")), engine)
    assert result.returncode == 0 and "RAN 42" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_the_allow_list_permits_exactly_its_names(tmp_path, engine):
    user = _file(tmp_path, _calling("env.double"))
    ok = _run_with_env(user, engine, allow="env.double")
    assert ok.returncode == 0 and "RAN 42" in ok.stdout, ok.stdout + ok.stderr
    refused = _run_with_env(user, engine, allow="env.other")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "'env.double': it is not a VM builtin and not in the loader's allow-list" in \
        refused.stdout
    internal = _file(tmp_path, _calling("relax.ext.ccompiler"), "internal.rvm")
    listed = _run_with_env(internal, engine, allow="relax.ext.ccompiler")
    assert "LOAD-ERROR" not in listed.stdout  # loads (running it is the user's choice)


def test_the_cli_takes_env_files_and_an_allow_list(tmp_path):
    model = _file(tmp_path, _calling("env.double"))
    (tmp_path / "env.py").write_text("import rvm\nrvm.register_func('env.double', "
                                     "lambda x: rvm.nd.array(x.numpy() * 2))\n")
    np.save(tmp_path / "x.npy", np.float32(21))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "rvm.driver.cli", "run", str(model),
                               "-i", "x.npy", "--env", "env.py", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, env=_ENV)
    ran = cli()
    assert ran.returncode == 0 and "42" in ran.stdout, ran.stdout + ran.stderr
    allowed = cli("--allow", "env.double")
    assert allowed.returncode == 0 and "42" in allowed.stdout, allowed.stdout + allowed.stderr
    refused = cli("--allow", "env.other")
    assert refused.returncode == 1 and "'env.double'" in refused.stderr, refused.stderr


@T.prim_func
def kernel_calling_the_compiler(x: T.handle, y: T.handle):
    X = T.match_buffer(x, (8,), "float32")
    Y = T.match_buffer(y, (8,), "float32")
    for i in range(8):
        Y[i] = X[i]
    T.evaluate(T.call_packed("relax.ext.ccompiler", X))


def _kernel_file(tmp_path, kernel):
    @I.ir_module
    class Mod:
        @T.prim_func
        def kern(x: T.handle, y: T.handle):  # replaced below by the kernel under test
            X = T.match_buffer(x, (8,), "float32")
            Y = T.match_buffer(y, (8,), "float32")
            for i in range(8):
                Y[i] = X[i]

        @R.function
        def main(x: R.Tensor((8,), "float32")):
            with R.dataflow():
                y = R.call_tir(Mod.kern, (x,), out_sinfo=R.Tensor((8,), "float32"))
                R.output(y)
            return y
    Mod["kern"] = kernel
    path = tmp_path / "kernel.rvm"
    relax.build(Mod, target="c").export_library(str(path))
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_kernel_calling_a_compiler_global_is_refused_at_load(tmp_path, engine):
    path = _kernel_file(tmp_path, kernel_calling_the_compiler)
    result = _run_with_env(path, engine)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "'relax.ext.ccompiler': it is one of rvm's internal functions" in result.stdout
    listed = _run_with_env(path, engine, allow="relax.ext.ccompiler")
    assert "LOAD-ERROR" not in listed.stdout, listed.stdout + listed.stderr
