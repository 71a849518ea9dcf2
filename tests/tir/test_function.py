import pytest

from rvm import tir
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal, structural_equal, structural_hash
from tests.tir.builders import matmul_func, relu_func


def test_buffers_as_params_become_handles():
    f = relu_func()
    assert len(f.params) == 2 and all(p.dtype == "handle" for p in f.params)
    assert f.buffer_of(f.params[0]).name == "X" and f.buffer_of("Y").name == "Y"
    assert f.attrs["global_symbol"] == "relu0"


def test_with_attr_is_a_copy():
    f = relu_func()
    g = f.with_attr("global_symbol", "main")
    assert g.attrs["global_symbol"] == "main" and f.attrs["global_symbol"] == "relu0"
    assert g.body is f.body


def test_buffer_map_key_must_be_param():
    A = tir.decl_buffer((4,), name="A")
    with pytest.raises(ValueError, match="not a parameter"):
        tir.PrimFunc([], tir.Evaluate(0), buffer_map={tir.Var("a", "handle"): A})


def test_alpha_renamed_functions_equal():
    a = relu_func()
    b = relu_func(names=("P", "Q", "x", "y", "u", "w", "m"))
    assert_structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert_structural_equal(IRModule({"relu0": a}), IRModule({"relu0": b}))


def test_dtype_mismatch_located():
    with pytest.raises(ValueError) as info:
        assert_structural_equal(relu_func(), relu_func(dtype="float16"))
    assert "<root>.buffer_map[X].dtype" in str(info.value)
    assert "float32" in str(info.value) and "float16" in str(info.value)


def test_loop_kind_mismatch_located():
    with pytest.raises(ValueError) as info:
        assert_structural_equal(relu_func(), relu_func(kind="parallel"))
    msg = str(info.value)
    assert "<root>.body.block.body.kind" in msg and "SERIAL" in msg and "PARALLEL" in msg
    assert structural_hash(relu_func()) != structural_hash(relu_func(kind="parallel"))


def test_shape_mismatch_located():
    with pytest.raises(ValueError, match=r"shape\[1\]"):
        assert_structural_equal(matmul_func(), matmul_func(n=7))


def test_attribute_mismatch_in_module():
    a = IRModule({"main": matmul_func()})
    b = IRModule({"main": matmul_func().with_attr("tir.noalias", True)})
    with pytest.raises(ValueError, match=r'<root>\.functions\[I\.GlobalVar\("main"\)\]\.attrs'):
        assert_structural_equal(a, b)


def test_block_name_is_not_structure():
    """As in TVM, blocks compare (and hash) equal up to their names: a module with an unnamed
    ``T.block()`` equals the same module built by emit_te with named blocks."""
    from rvm.ir.base import structural_hash

    f = matmul_func()
    renamed = f.with_body(f.body.with_fields(block=f.body.block.with_fields(name_hint="other")))
    assert structural_equal(f, renamed)
    assert structural_hash(f) == structural_hash(renamed)
    assert renamed.body.block.name_hint == "other"
