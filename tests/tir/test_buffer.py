import pytest

from rvm import tir
from rvm.ir.base import structural_equal


def test_decl_buffer_fields():
    A = tir.decl_buffer((4, 8), "float32", name="A")
    assert A.name == "A" and A.dtype == "float32" and A.ndim == 2
    assert [d.value for d in A.shape] == [4, 8] and A.shape[0].dtype == "int32"
    assert A.data.dtype == "handle" and A.data.name_hint == "A"
    assert A.strides == () and A.elem_offset.value == 0


def test_symbolic_shape_uses_int64_index_type():
    n = tir.Var("n", "int64")
    X = tir.decl_buffer((1, n), name="X")
    assert X.shape[0].dtype == "int64" and X.shape[1] is n


def test_indexing_builds_loads_and_regions():
    A = tir.decl_buffer((4, 8), name="A")
    i = tir.Var("i")
    load = A[i, 2]
    assert isinstance(load, tir.BufferLoad) and load.buffer is A and load.indices[1].value == 2
    region = A[i, 0:8]
    assert isinstance(region, tir.BufferRegion)
    assert region.region[0].min is i and region.region[0].extent.value == 1
    assert region.region[1].extent.value == 8
    with pytest.raises(ValueError, match="2 dimensions"):
        A[i]


def test_vstore_and_offset():
    A = tir.decl_buffer((4, 8), name="A")
    i, j = tir.Var("i"), tir.Var("j")
    store = A.vstore([i, j], 1.0)
    assert isinstance(store, tir.BufferStore) and store.value.dtype == "float32"
    assert repr(A.offset_of([i, j])) == "i * 8 + j"
    assert [s.value for s in A.compact_strides()] == [8, 1]


def test_renamed_buffers_are_structurally_equal():
    a = tir.decl_buffer((4, 8), name="A")
    b = tir.decl_buffer((4, 8), name="B")
    assert structural_equal(a, b, map_free_vars=True)
    assert not structural_equal(a, tir.decl_buffer((4, 9), name="A"))
    assert not structural_equal(a, tir.decl_buffer((4, 8), "float16", name="A"))


def test_bad_shape_is_rejected():
    with pytest.raises(TypeError, match="shape"):
        tir.decl_buffer((4, "x"))


def test_map_free_vars_false_distinguishes_used_buffers():
    a = tir.decl_buffer((4,), name="A")
    b = tir.decl_buffer((4,), name="B")
    i = tir.Var("i")
    assert structural_equal(a[i], b[i], map_free_vars=True)
    assert not structural_equal(a[i], b[i], map_free_vars=False)
    assert structural_equal(a[i], a[i], map_free_vars=False)
    # Declared buffers (function parameters) are definitions, so renamed functions still match.
    fa = tir.PrimFunc([a], tir.BufferStore(a, 1.0, [0]))
    fb = tir.PrimFunc([b], tir.BufferStore(b, 1.0, [0]))
    assert structural_equal(fa, fb, map_free_vars=False)
