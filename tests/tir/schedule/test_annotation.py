"""annotate / unannotate on blocks and loops: Before/Expected, the values stored, illegal uses."""
import pytest

from rvm import tir
from rvm.script import ir as I
from rvm.script import tir as T
from rvm.tir.schedule import Schedule, ScheduleError
from rvm.tir.schedule.primitive.for_kind import MAX_UNROLL_STEPS

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


def test_annotate_stores_constant_expressions_as_plain_values():
    sch = Schedule(RowSum, debug_mask="all")
    block = sch.get_block("B")
    sch.annotate(block, "f", T.float32(0.5))
    sch.annotate(block, "s", tir.StringImm("text"))
    step = sch.sample_categorical([2, 3], [0.0, 1.0])
    sch.annotate(block, "n", step * 4 + 1)
    assert {k: sch.get(block).annotations[k] for k in "fsn"} == {"f": 0.5, "s": "text", "n": 13}
    check_schedule(sch, RowSum, numeric=False)


def test_annotation_keys_are_printable_and_not_the_compilers_own():
    sch = Schedule(RowSum)
    block = sch.get_block("B")
    for key in ("", "two\nlines", "nul\x00"):
        with pytest.raises(ScheduleError, match='annotate on block "B": an annotation key is a '
                                                'non-empty string of printable characters'):
            sch.annotate(block, key, 1)
    with pytest.raises(ScheduleError, match="keys under 'rvm.' are set by the compiler's passes"):
        sch.annotate(sch.get_loops(block)[1], "rvm.simd_reduction", "+")
    assert dict(sch.get(block).annotations) == {}


def test_known_keys_take_ints_in_bounds_on_their_kind_of_statement():
    sch = Schedule(RowSum)
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    for value in (-1, MAX_UNROLL_STEPS + 1, 10 ** 12, "64", 1.5, True, [64]):
        with pytest.raises(ScheduleError, match=r"annotate on loop k: 'pragma_auto_unroll_max_"
                                                r"step' takes an int in \[0, 4096\] .got"):
            sch.annotate(k, "pragma_auto_unroll_max_step", value)
    with pytest.raises(ScheduleError, match="'pragma_auto_unroll_max_step' is an annotation of a "
                                            "loop .set on a block"):
        sch.annotate(block, "pragma_auto_unroll_max_step", 16)
    with pytest.raises(ScheduleError, match="'meta_schedule.unroll_explicit' is an annotation of "
                                            "a block .set on a loop"):
        sch.annotate(k, "meta_schedule.unroll_explicit", 16)
    too_many = sch.sample_categorical([16, 1 << 20], [0.0, 1.0])
    with pytest.raises(ScheduleError, match=r"takes an int in \[0, 4096\] .got 1048576"):
        sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", too_many)
    sch.annotate(k, "pragma_auto_unroll_max_step", MAX_UNROLL_STEPS)
    assert sch.get(k).annotations == {"pragma_auto_unroll_max_step": MAX_UNROLL_STEPS}


def test_annotation_values_are_finite_constants():
    sch = Schedule(RowSum)
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    for value in (float("nan"), [1.0, float("inf")], {"x": -float("inf")}):
        with pytest.raises(ScheduleError, match="a number in an annotation is finite"):
            sch.annotate(block, "ratio", value)
    with pytest.raises(ScheduleError, match="an expression value must be a constant or made "
                                            "of sampled variables .value i . 1."):
        sch.annotate(block, "where", sch.get(i).loop_var + 1)
    assert dict(sch.get(block).annotations) == {}
