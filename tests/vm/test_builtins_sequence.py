"""vm.builtin.sequence_*, optional_* and string_* (rvm/vm/builtins_sequence.py,
builtins_string.py): their results and the errors they report, called from the registry
and from a program on each engine."""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax.block_builder import BlockBuilder
from rvm.relax.expr import PrimValue, ShapeExpr, StringImm, Var
from rvm.relax.op.base import call_pure_packed
from rvm.relax.struct_info import ObjectStructInfo, TensorStructInfo
from rvm.runtime.container import Array, ShapeTuple
from rvm.runtime.ndarray import array
from rvm.runtime.packed_func import get_global_func


def builtin(name):
    import rvm.vm.machine  # noqa: F401  (registers the builtins)

    return get_global_func(f"vm.builtin.{name}")


def _seq(*arrays):
    return Array([array(np.asarray(a, "float32")) for a in arrays])


def _pos(k):
    return array(np.array(k, "int64"))


def test_sequence_builtins_compute_new_sequences():
    seq = _seq([1], [2, 3])
    inserted = builtin("sequence_insert")(seq, array(np.zeros(1, "float32")), _pos(-1))
    assert [t.numpy().tolist() for t in inserted] == [[1], [0], [2, 3]]
    assert len(seq) == 2  # the argument is unchanged
    assert [t.numpy().tolist() for t in builtin("sequence_erase")(inserted)] == [[1], [0]]
    assert builtin("sequence_at")(inserted, _pos(2)).numpy().tolist() == [2, 3]
    assert int(builtin("sequence_length")(inserted).numpy()) == 3
    stacked = builtin("sequence_concat")(_seq([1, 2], [3, 4]), 0, 1)
    assert stacked.numpy().tolist() == [[1, 2], [3, 4]]


def test_sequence_builtins_report_bad_arguments():
    with pytest.raises(IndexError, match="position 2 is out of range for a sequence of 2 "
                                         r"tensors \(expected -2 to 1\)"):
        builtin("sequence_at")(_seq([1], [2]), _pos(2))
    with pytest.raises(IndexError, match="sequence_erase: the sequence is empty"):
        builtin("sequence_erase")(Array([]))
    with pytest.raises(TypeError, match="holds float32 tensors, got int64"):
        builtin("sequence_insert")(_seq([1]), _pos(1))
    with pytest.raises(TypeError, match="the position must be one integer"):
        builtin("sequence_at")(_seq([1]), array(np.zeros(2, "int64")))
    with pytest.raises(TypeError, match="expected a sequence"):
        builtin("sequence_length")(array(np.zeros(2, "float32")))
    with pytest.raises(ValueError, match="axis 2 is out of range for rank 1"):
        builtin("sequence_concat")(_seq([1]), 2, 0)
    with pytest.raises(ValueError, match="the optional value is empty"):
        builtin("optional_get_element")(None)
    assert not bool(builtin("optional_has_element")(None).numpy())


def test_string_builtins():
    words = builtin("string_tensor")(ShapeTuple([2, 1]), "a", "b")
    assert words.shape == (2, 1) and words.dtype.kind == "U"
    assert builtin("string_equal")(words, np.array(["b"])).numpy().tolist() == \
        [[False], [True]]
    with pytest.raises(ValueError, match="holds 2 strings, got 1"):
        builtin("string_tensor")(ShapeTuple([2]), "a")
    with pytest.raises(ValueError, match=r"shapes \[2\] and \[3\] do not broadcast"):
        builtin("string_equal")(np.array(["a", "b"]), np.array(["a", "b", "c"]))
    with pytest.raises(TypeError, match="the left operand must be a string tensor"):
        builtin("string_equal")(np.zeros(2), np.array(["a", "b"]))


def test_a_program_on_sequences_and_strings_runs_on_this_engine(vm_engine):
    bb = BlockBuilder()
    seq, words = Var("seq", ObjectStructInfo()), Var("words", ObjectStructInfo())
    with bb.function("main", params=[seq, words]):
        with bb.dataflow():
            n = bb.emit(call_pure_packed("vm.builtin.sequence_length", seq,
                                         sinfo_args=TensorStructInfo((), "int64")))
            joined = bb.emit(call_pure_packed("vm.builtin.sequence_concat", seq, PrimValue(0),
                                              PrimValue(0),
                                              sinfo_args=TensorStructInfo(ndim=1,
                                                                          dtype="float32")))
            const = bb.emit(call_pure_packed("vm.builtin.string_tensor", ShapeExpr([2]),
                                             StringImm("x"), StringImm("ÿ"),
                                             sinfo_args=ObjectStructInfo()))
            same = bb.emit(call_pure_packed("vm.builtin.string_equal", words, const,
                                            sinfo_args=TensorStructInfo((2,), "bool")))
            out = bb.emit_output(relax.Tuple([n, joined, same]))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), target="python"), rvm.cpu())
    n, joined, same = vm["main"]([np.ones(2, "float32"), np.zeros(1, "float32")],
                                 np.array(["x", "y"], dtype=object))
    assert int(n.numpy()) == 2 and joined.numpy().tolist() == [1, 1, 0]
    assert same.numpy().tolist() == [True, False]
    with pytest.raises(TypeError, match="dtype object is not a tensor"):
        vm["main"]([], np.array(["x", 1], dtype=object))
