"""annotate / unannotate on blocks and loops."""
import pytest

from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError

from tests.tir.schedule.common import RowSum, check_schedule


def test_annotate_block_and_loop_with_sampled_value():
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
            with T.block("root"):
                T.reads()
                T.writes()
                T.block_attr({"meta_schedule.parallel": 16})
                for i in range(8):
                    for k in T.serial(64, annotations={"pragma_auto_unroll_max_step": 64,
                                                       "note": "inner"}):
                        with T.block("B"):
                            vi, vk = T.axis.remap("SR", [i, k])
                            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                            with T.init():
                                B[vi] = T.float32(0)
                            B[vi] = B[vi] + A[vi, vk]

    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    sch.annotate(sch.get_block("root"), "meta_schedule.parallel", 16)
    sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    step = sch.sample_categorical([0, 16, 64], [0.0, 0.0, 1.0])
    sch.annotate(k, "pragma_auto_unroll_max_step", step)
    sch.annotate(k, "note", "inner")
    sch.annotate(block, "tmp", [1, 2])
    sch.unannotate(block, "tmp")
    assert sch.get(k).annotations["pragma_auto_unroll_max_step"] == 64
    check_schedule(sch, RowSum, Expected)


def test_unannotate_missing_key():
    sch = Schedule(RowSum)
    with pytest.raises(ScheduleError, match="no annotation with this key"):
        sch.unannotate(sch.get_block("B"), "missing")


def test_annotate_rejects_values_that_are_not_plain_data():
    sch = Schedule(RowSum)
    with pytest.raises(TypeError, match="ann_val must be"):
        sch.annotate(sch.get_block("B"), "key", object())
    with pytest.raises(TypeError, match="ann_key must be a str"):
        sch.annotate(sch.get_block("B"), 3, 1)
