"""Seed 004's kernels as the tuner's tests use them: the 128^3 matmul of §5 with its
stochastic schedule, and §5.4's linear0 (static shapes) in MyModuleMixture."""
import numpy as np

from rvm import meta_schedule as ms
from rvm.meta_schedule import default_config
from rvm.meta_schedule.schedule_rule.multi_level_tiling import MultiLevelTiling
from rvm.script import ir as I, relax as R, tir as T  # noqa: E741


@I.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def stochastic_schedule_mm(sch):
    """Seed 004 §5.1's probabilistic schedule: a sampled split of j."""
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


@I.ir_module
class MyModuleMixture:
    @T.prim_func
    def linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10),
                                                                          dtype="float32"))
            R.output(out)
        return out


def matmul_inputs(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 128)).astype("float32")
    b = rng.standard_normal((128, 128)).astype("float32")
    return a, b


def with_packed_spaces(target):
    """The default space generator with MultiLevelTiling's packed spaces (pack_reads=True)."""
    rules = [MultiLevelTiling(structure="SSRSRS", max_innermost_factor=64, pack_reads=True)
             if isinstance(rule, MultiLevelTiling) else rule
             for rule in default_config.schedule_rules(target)]
    return ms.space_generator.PostOrderApply(sch_rules=rules)
