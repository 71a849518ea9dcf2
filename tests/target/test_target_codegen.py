"""The build Target reaches code generation: -mcpu/-mattr the C compiler's flags (and the
cache key) and the default schedules' vector width, -num-cores the default schedules'
cores and the most threads kernels' parallel loops use."""
import re

import numpy as np
import pytest

import rvm
from rvm import relax, te
from rvm.dlight import CPUInfo, DefaultCPUSchedule
from rvm.runtime.compiler import CompileError, default_compiler
from rvm.target import Target
from rvm.tir.stmt import ForKind
from rvm.tir.stmt_functor import post_order_visit
from tests.codegen.kernel_cases import set_loop_kind


def _parallel_double():
    A = te.placeholder((64, 32), name="A")
    func = te.create_prim_func([A, te.compute((64, 32), lambda i, j: A[i, j] * 2.0, name="B")])
    return set_loop_kind(func, "i", ForKind.PARALLEL)


def _teams(lib):
    return re.findall(r"rvm_team\(rvm_n_\w+, (\d+)\)", lib.get_source())


def test_num_cores_caps_the_threads_of_parallel_loops_and_survives_saving():
    capped = rvm.build(_parallel_double(), target=Target("llvm -num-cores=1"))
    assert _teams(capped) == ["1"]
    assert _teams(rvm.build(_parallel_double(), target="llvm")) == ["0"]  # no cap
    a = np.arange(64 * 32, dtype="float32").reshape(64, 32)
    b = rvm.nd.array(np.zeros((64, 32), "float32"))
    capped["main"](rvm.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)
    from rvm.codegen.c.target import regenerate_c

    source = regenerate_c(capped.tir, default_compiler())[0]  # as a saved file is loaded
    assert re.findall(r"rvm_team\(rvm_n_\w+, (\d+)\)", source) == ["1"]


@pytest.mark.parametrize("text, message", [
    ("llvm -num-cores=0", r"'num-cores' expects 1 to 1024 cores, got 0"),
    ("llvm -num-cores=5000", r"'num-cores' expects 1 to 1024 cores, got 5000"),
    ("llvm -mattr=avx2", r"'mattr' expects features written '\+name' or '-name'.*got 'avx2'"),
    ("llvm -mcpu=-O0", r"'mcpu' expects a CPU name such as 'haswell'.*got '-O0'"),
])
def test_bad_cpu_attributes_are_refused_by_name(text, message):
    with pytest.raises(ValueError, match=message):
        rvm.build(_parallel_double(), target=Target(text))


def test_an_unknown_cpu_is_the_compilers_error():
    with pytest.raises(CompileError, match="refuses the target's flags -march=nocpu"):
        rvm.build(_parallel_double(), target=Target("llvm -mcpu=nocpu"))


def test_mcpu_and_mattr_become_the_compilers_flags_and_key():
    compiler = default_compiler()
    host = compiler.flags()
    assert "-march=native" in host
    haswell = compiler.flags(target_flags=Target("llvm -mcpu=haswell").compiler_flags())
    assert "-march=haswell" in haswell and "-march=native" not in haswell
    features = Target("llvm -mattr=+fma,-avx512f").compiler_flags()
    assert features == ["-mfma", "-mno-avx512f"]
    assert {"-march=native", "-mfma", "-mno-avx512f"} <= set(compiler.flags(target_flags=features))
    keys = {rvm.build(_parallel_double(), target=t).compiled.key
            for t in ("llvm", "llvm -mcpu=haswell", "llvm -mcpu=nehalem")}
    assert len(keys) == 3  # the same source, three objects


def test_mcpu_sets_the_vector_width_of_the_default_schedules():
    assert CPUInfo.from_target(Target("llvm -mcpu=nehalem")).vector_bytes == 16
    assert CPUInfo.from_target(Target("llvm -mcpu=haswell")).vector_bytes == 32
    assert CPUInfo.from_target(Target("llvm -mcpu=skylake-avx512")).vector_bytes == 64
    assert CPUInfo.from_target(Target("llvm -mcpu=skylake-avx512 -mattr=-avx512f")) \
        .vector_bytes == 32
    assert CPUInfo.from_target(Target("llvm -num-cores=3")).cores == 3
    assert CPUInfo.from_target(None) == CPUInfo.host() or \
        CPUInfo.from_target(None) is CPUInfo.host()


def _relu_model():
    x = relax.Var("x", relax.TensorStructInfo((256, 1024), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.relu(x))
        bb.emit_func_output(out)
    return bb.get()


def test_relax_build_schedules_for_its_target():
    def source(target):
        built = relax.build(_relu_model(), target=target)
        return built.kernel_libs[0].get_source()

    wide, narrow = source("llvm -mcpu=skylake-avx512"), source("llvm -mcpu=nehalem")
    assert wide != narrow  # vector tiles of 16 float32 lanes against 4
    big = te.placeholder((4096, 4096), name="A")  # above the rules' parallel threshold
    mod = rvm.IRModule.from_expr(te.create_prim_func(
        [big, te.compute((4096, 4096), lambda i, j: big[i, j] * 2.0, name="B")]), "main")

    def parallel_loops(target):
        with Target(target):
            func = DefaultCPUSchedule()(mod)["main"]
        found = []
        post_order_visit(func.body, lambda n: found.append(n)
                         if getattr(n, "kind", None) == ForKind.PARALLEL else None)
        return len(found)

    assert parallel_loops("llvm -num-cores=1") == 0
    assert parallel_loops("llvm -num-cores=2") == 1
    with Target("llvm -mcpu=nehalem"):
        inside = DefaultCPUSchedule()(rvm.IRModule.from_expr(_parallel_double(), "main"))
    outside = DefaultCPUSchedule(info=CPUInfo(vector_bytes=16, cores=CPUInfo.host().cores))(
        rvm.IRModule.from_expr(_parallel_double(), "main"))
    rvm.ir.assert_structural_equal(inside, outside)
