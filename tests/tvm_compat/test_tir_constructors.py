"""TIR node constructors convert their arguments as TVM's do, and the IR types TVM's TIR
tests use (``PointerType``, ``VDevice``, structural Type equality), in TVM's test style."""
import pytest

import rvm
import rvm.testing
from rvm import ir, tir
from rvm.script import tir as T


def test_buffer_load_takes_python_ints():
    buffer_var = tir.Var("buf", ir.PointerType(ir.PrimType("float32")))
    buffer = tir.decl_buffer([16, 4], "float32", data=buffer_var)
    x = tir.BufferLoad(buffer, [1, 2])
    assert isinstance(x, tir.BufferLoad)
    assert x.dtype == "float32"
    assert x.buffer.data.same_as(buffer_var)
    assert [i.value for i in x.indices] == [1, 2]
    assert all(i.dtype == "int32" for i in x.indices)
    rvm.ir.assert_structural_equal(x, buffer[1, 2])


def test_buffer_load_refuses_what_is_not_a_buffer():
    with pytest.raises(TypeError, match="BufferLoad expects a Buffer, got int"):
        tir.BufferLoad(3, [1])
    with pytest.raises(TypeError, match="cannot convert"):
        tir.BufferLoad(tir.decl_buffer([4]), [object()])


def test_ramp_and_broadcast_take_python_numbers():
    x = tir.Ramp(1, 2, 10)
    assert x.base.value == 1 and x.stride.value == 2 and x.lanes == 10
    assert x.dtype == "int32x10"
    y = tir.Broadcast(tir.const(1.0, "float32"), tir.IntImm("int64", 4))
    assert y.lanes == 4 and y.dtype == "float32x4"
    assert tir.Broadcast(0, 8).dtype == "int32x8"
    with pytest.raises(TypeError, match="one dtype"):
        tir.Ramp(tir.const(0, "int64"), tir.const(1, "int32"), 4)
    with pytest.raises(ValueError, match="lanes must be positive"):
        tir.Ramp(0, 1, 0)


def test_scalable_vectors_are_refused_by_name():
    assert str(tir.vscale()) == "T.vscale()"
    assert tir.vscale().dtype == "int32"
    for make in (lambda: tir.Ramp(0, 1, 4 * tir.vscale()),
                 lambda: tir.Broadcast(0, tir.vscale())):
        with pytest.raises(TypeError, match="no scalable vectors"):
            make()


def test_let_converts_its_value_and_checks_its_var():
    v = tir.Var("aa", "int32")
    x = tir.Let(v, 1, v)
    assert x.var.same_as(v) and x.value.value == 1 and x.body.same_as(v)
    assert tir.Let(v, 2, 5).body.value == 5
    with pytest.raises(TypeError, match="Let expects a Var"):
        tir.Let(1, 2, 3)


def test_var_of_a_pointer_type():
    storage_scope = "global.texture"
    ptype = ir.PointerType(ir.PrimType("float32"), storage_scope)
    x = tir.Var("xyz", ptype)
    assert x.dtype == "handle"
    assert x.type_annotation == ptype
    assert x.type_annotation.storage_scope == storage_scope
    assert isinstance(ptype.element_type, ir.PrimType)
    assert tir.Var("n", "int8").type_annotation == ir.PrimType("int8")
    assert tir.Var("n", ir.PrimType("int64")).dtype == "int64"
    with pytest.raises(TypeError, match="element_type must be a Type"):
        ir.PointerType("float32")
    with pytest.raises(TypeError, match="a dtype, a PrimType or a PointerType"):
        tir.Var("t", ir.TupleType([]))


def test_types_compare_structurally():
    assert ir.PrimType("int32") == ir.PrimType("int32")
    assert ir.PrimType("int32") != ir.PrimType("int8")
    assert not ir.PrimType("int32").same_as(ir.PrimType("int32"))
    assert len({ir.PrimType("float32"), ir.PrimType("float32")}) == 1
    assert ir.PointerType(ir.PrimType("int32"), "shared") != ir.PointerType(ir.PrimType("int32"))
    assert ir.PrimType("int32") != "int32"


def test_vdevice():
    vdev = ir.VDevice("llvm")
    assert vdev.target == "llvm" and vdev.vdevice_id == 0 and vdev.memory_scope == "global"
    rvm.ir.assert_structural_equal(ir.VDevice("cuda", 1), ir.VDevice("cuda", 1))
    assert not rvm.ir.structural_equal(ir.VDevice("cuda", 1), ir.VDevice("cuda", 0))
    with pytest.raises(TypeError, match="vdevice_id"):
        ir.VDevice("llvm", -1)
    with pytest.raises(TypeError, match="target"):
        ir.VDevice(3)


def test_thread_binding_takes_the_thread_positionally():
    @T.prim_func
    def positional(a: T.handle) -> None:
        A = T.match_buffer(a, (16,))
        for y in T.thread_binding(16, "threadIdx.x"):
            A[y] = A[y] * 2.0

    @T.prim_func
    def keyword(a: T.handle) -> None:
        A = T.match_buffer(a, (16,))
        for y in T.thread_binding(0, 16, thread="threadIdx.x"):
            A[y] = A[y] * 2.0

    assert positional.body.thread_binding == "threadIdx.x"
    rvm.ir.assert_structural_equal(positional.with_attr("global_symbol", "f"),
                                   keyword.with_attr("global_symbol", "f"))


def test_script_buffer_and_handle_from_python():
    buffer_0 = T.Buffer((128, 128), "float32")
    assert isinstance(buffer_0, tir.Buffer)
    assert [int(d) for d in buffer_0.shape] == [128, 128] and buffer_0.dtype == "float32"
    assert T.Buffer(16, "int8").dtype == "int8"
    ptr = T.handle("float32", "shared")
    assert isinstance(ptr, tir.Var) and ptr.dtype == "handle"
    assert ptr.type_annotation == ir.PointerType(ir.PrimType("float32"), "shared")
    assert not isinstance(T.Buffer(("n",), "float32"), tir.Buffer)  # a script-only form


def test_parsed_function_keeps_its_python_name():
    @T.prim_func
    def matmul(a: T.handle) -> None:
        A = T.match_buffer(a, [4])
        for i in range(4):
            A[i] = T.float32(0)

    assert matmul.__name__ == "matmul"
    assert matmul.attrs["global_symbol"] == "matmul"


if __name__ == "__main__":
    rvm.testing.main()
