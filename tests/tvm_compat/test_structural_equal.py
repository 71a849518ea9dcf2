"""Structural equality and hashing with TVM's rules, in the style of TVM's own tests
(tests/python/tir-base/test_tir_structural_equal_hash.py): free variables are matched only
with ``map_free_vars=True`` (off by default), variables are matched where they are defined
(parameters, let and loop variables, declared buffers, binding variables, the symbolic
dimensions of a signature), struct info and attributes count, the hash agrees with
equality, and ``get_first_structural_mismatch`` names the first difference on each side."""
import numpy as np
import pytest

import rvm
from rvm import relax, te, tir
from rvm.ir import ObjectPath, get_first_structural_mismatch
from rvm.script import ir as I, relax as R, tir as T


def consistent_equal(x, y, map_free_vars=False):
    equal_xy = rvm.ir.structural_equal(x, y, map_free_vars)
    equal_yx = rvm.ir.structural_equal(y, x, map_free_vars)
    hash_x = rvm.ir.structural_hash(x, map_free_vars)
    hash_y = rvm.ir.structural_hash(y, map_free_vars)
    assert equal_xy == equal_yx, f"not commutative: {x} vs {y}"
    assert equal_xy == (hash_x == hash_y), f"hash disagrees with equality: {x} vs {y}"
    return equal_xy


def get_sequal_mismatch(x, y, map_free_vars=False):
    forward = get_first_structural_mismatch(x, y, map_free_vars)
    backward = get_first_structural_mismatch(y, x, map_free_vars)
    if forward is None and backward is None:
        return None
    assert forward is not None and backward is not None
    assert forward[0] == backward[1] and forward[1] == backward[0]
    return forward


def test_free_variables_map_only_when_asked():
    vx, vy, vz = te.var("x"), te.var("y"), te.var("z")
    zx, zy = vx + vx, vy + vy
    assert consistent_equal(zx * zx, (vx + vx) * (vx + vx))
    with pytest.raises(ValueError):
        rvm.ir.assert_structural_equal(tir.const(1, "int32"), tir.const(10, "int32"))
    assert not consistent_equal(vx, vy)
    assert consistent_equal(vx, vy, map_free_vars=True)
    assert not consistent_equal(vx + vx, vy + vx, map_free_vars=True)  # vy cannot be both
    assert consistent_equal(vx + vy, vy + vx, map_free_vars=True)
    assert consistent_equal(vx + vy + vz, vy + vz + vx, map_free_vars=True)
    assert not consistent_equal(vx + 1, vy + 1)
    assert consistent_equal(zx * zx, zy * zy, map_free_vars=True)
    assert not consistent_equal(zx * zx, zy * zy)


def test_definitions_are_matched_by_position():
    vx, vy, vz = te.var("x"), te.var("y"), te.var("z")
    assert consistent_equal(tir.Let(vx, 1, vx - 1), tir.Let(vy, 1, vy - 1))
    assert consistent_equal(tir.Let(vx, 1, vx // vz), tir.Let(vy, 1, vy // vz))
    assert not consistent_equal(tir.Let(vx, 1, vx // vz), tir.Let(vy, 1, vy // vx))
    loop_a = tir.For(vx, 0, 4, "serial", tir.Evaluate(vx + vz))
    loop_b = tir.For(vy, 0, 4, "serial", tir.Evaluate(vy + vz))
    assert consistent_equal(loop_a, loop_b)
    func0 = tir.PrimFunc([vx, vy], tir.Evaluate(vx + vy))
    func1 = tir.PrimFunc([vx, vy], tir.Evaluate(vy + vx))
    assert not consistent_equal(func0, func1)
    assert consistent_equal(func0, tir.PrimFunc([vy, vz], tir.Evaluate(vy + vz)))
    w0, w1 = tir.While(vx > 0, tir.Evaluate(vx)), tir.While(vy > 0, tir.Evaluate(vy))
    assert not consistent_equal(w0, w1)
    assert consistent_equal(w0, w1, map_free_vars=True)


def test_prim_funcs_with_buffers_attributes_and_modules():
    x, y = te.var("x"), te.var("y")
    b = tir.decl_buffer((x,), "float32")
    t = te.var("t")
    func0 = tir.PrimFunc([x, y, b], tir.LetStmt(t, 10, tir.Evaluate(t + x)))
    func1 = rvm.ir.load_json(rvm.ir.save_json(func0))
    rvm.ir.assert_structural_equal(func0, func1)
    func0 = func0.with_attr("data", rvm.nd.array([1, 2, 3]))
    func1 = func1.with_attr("data", rvm.nd.array([1, 2, 3]))
    rvm.ir.assert_structural_equal(rvm.IRModule.from_expr(func0), rvm.IRModule.from_expr(func1))
    assert not consistent_equal(func0, func1.with_attr("data", rvm.nd.array([1, 2, 4])))

    handle = te.var("x", dtype="handle")
    local0 = tir.decl_buffer((10, 10), "float32", scope="local")
    local1 = tir.decl_buffer((10, 10), "float32", scope="local")
    shared = tir.decl_buffer((10, 10), "float32")
    funcs = [tir.PrimFunc([handle], tir.Evaluate(0), buffer_map={handle: buf})
             for buf in (local0, local1, shared)]
    assert consistent_equal(funcs[0], funcs[1])
    assert not consistent_equal(funcs[0], funcs[2])

    nx = rvm.nd.array(np.arange(10))
    assert consistent_equal(nx, rvm.nd.array(np.arange(10)))
    assert not consistent_equal(nx, rvm.nd.array(np.arange(10).reshape(2, 5)))
    assert consistent_equal({"x": [1, 2, 3], "y": 2}, {"y": 2, "x": [1, 2, 3]})
    assert not consistent_equal({"x": [1, 2, 3], "y": 2}, {"y": 2, "x": [1, 2, 3, 4]})


def test_first_mismatch_paths_in_params_and_body():
    x, y, z = te.var("x"), te.var("y"), te.var("z")
    lhs_path, rhs_path = get_sequal_mismatch(tir.PrimFunc([x, y], tir.Evaluate(x)),
                                             tir.PrimFunc([x, y, z], tir.Evaluate(x)))
    assert lhs_path == ObjectPath.root().attr("params").missing_array_element(2)
    assert rhs_path == ObjectPath.root().attr("params").array_index(2)

    y0, y1 = te.var("y", dtype="int32"), te.var("z", dtype="float32")
    paths = get_sequal_mismatch(tir.PrimFunc([x, y0], tir.Evaluate(x)),
                                tir.PrimFunc([x, y1], tir.Evaluate(x)))
    assert paths == (ObjectPath.root().attr("params").array_index(1).attr("dtype"),) * 2

    x0, y0, x1, y1 = te.var("x"), te.var("y"), te.var("x"), te.var("y")
    paths = get_sequal_mismatch(tir.PrimFunc([x0, y0], tir.Evaluate(x0 + x0)),
                                tir.PrimFunc([x1, y1], tir.Evaluate(x1 + y1)))
    assert paths == (ObjectPath.root().attr("body").attr("value").attr("b"),) * 2
    assert get_sequal_mismatch(tir.PrimFunc([x0], tir.Evaluate(x0)),
                               tir.PrimFunc([x1], tir.Evaluate(x1))) is None


def test_first_mismatch_paths_in_sequences_and_buffer_maps():
    x = tir.Var("x", "int32")

    def seq(*offsets):
        return tir.SeqStmt([tir.Evaluate(x + k) if k else tir.Evaluate(x) for k in offsets])

    expected = ObjectPath.root().attr("seq").array_index(2).attr("value").attr("b").attr("value")
    assert get_sequal_mismatch(seq(0, 1, 2, 3), seq(0, 1, 99, 3)) == (expected, expected)
    # a difference inside the common part comes before the difference in length
    assert get_sequal_mismatch(seq(0, 1, 2, 3), seq(0, 1, 3)) == (expected, expected)
    lhs_path, rhs_path = get_sequal_mismatch(seq(0, 1, 2, 3), seq(0, 1, 2))
    assert lhs_path == ObjectPath.root().attr("seq").array_index(3)
    assert rhs_path == ObjectPath.root().attr("seq").missing_array_element(3)

    v, w = te.var("x"), te.var("x")
    buf0, buf0_clone, buf1 = (tir.decl_buffer(s) for s in ((10, 10), (10, 10), (10, 20)))
    f0 = tir.PrimFunc([v, w], tir.Evaluate(v), buffer_map={v: buf0})
    f0_clone = tir.PrimFunc([v, w], tir.Evaluate(v), buffer_map={v: buf0_clone})
    f1 = tir.PrimFunc([v, w], tir.Evaluate(v), buffer_map={v: buf1})
    expected = ObjectPath.root().attr("buffer_map").map_value(v).attr("shape").array_index(1) \
        .attr("value")
    assert get_sequal_mismatch(f0, f1) == (expected, expected)
    assert get_sequal_mismatch(f0, f0_clone) is None
    f2 = tir.PrimFunc([v, w], tir.Evaluate(v), buffer_map={v: buf0, w: buf1})
    lhs_path, rhs_path = get_sequal_mismatch(f0, f2)
    assert lhs_path == ObjectPath.root().attr("buffer_map").missing_map_entry()
    assert rhs_path == ObjectPath.root().attr("buffer_map").map_value(w)


def test_ir_module_mismatch_names_the_function():
    def generate(n):
        @I.ir_module
        class Module:
            @T.prim_func
            def func(A: T.Buffer(1, "int32")):
                for i in range(n):
                    A[0] = A[0] + 1

        return Module

    rvm.ir.assert_structural_equal(generate(16), generate(16))
    assert rvm.ir.structural_hash(generate(16)) == rvm.ir.structural_hash(generate(16))
    with pytest.raises(ValueError) as err:
        rvm.ir.assert_structural_equal(generate(16), generate(32))
    message = err.value.args[0]
    path = '<root>.functions[I.GlobalVar("func")].body.extent.value'
    assert message.startswith(f"StructuralEqual check failed, caused by lhs at {path} and rhs "
                              f"at {path}: values differ")


def test_nan_values_are_equivalent():
    @T.prim_func(private=True)
    def func_1():
        T.evaluate(T.float32("nan"))

    @T.prim_func(private=True)
    def func_2():
        T.evaluate(T.float32("nan"))

    rvm.ir.assert_structural_equal(func_1, func_2)
    assert rvm.ir.structural_hash(func_1) == rvm.ir.structural_hash(func_2)
    nan_quiet = float(np.int32(0x7FC00000).view("float32"))
    nan_payload = float(np.int32(0x7F800001).view("float32"))
    assert consistent_equal(T.float32(nan_quiet), T.float32(nan_payload))


def test_relax_signature_defines_its_symbolic_variables():
    @R.function
    def f(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n", 4), "float32"):
        n = T.int64()
        y: R.Tensor((n, 4), "float32") = R.add(x, x)
        return y

    @R.function
    def g(a: R.Tensor(("m", 4), "float32")) -> R.Tensor(("m", 4), "float32"):
        m = T.int64()
        b: R.Tensor((m, 4), "float32") = R.add(a, a)
        return b

    @R.function
    def h(a: R.Tensor(("m", 5), "float32")) -> R.Tensor(("m", 5), "float32"):
        m = T.int64()
        b: R.Tensor((m, 5), "float32") = R.add(a, a)
        return b

    g, h = g.with_attr("global_symbol", "f"), h.with_attr("global_symbol", "f")
    assert consistent_equal(f, g)  # names differ, definitions match
    assert not consistent_equal(f, h)  # struct info counts
    assert not consistent_equal(f, g.with_attr("global_symbol", "other"))  # attributes count
    lhs_path, _ = get_sequal_mismatch(f, h)
    assert str(lhs_path).startswith("<root>.params[0].struct_info")
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    sig_n = R.Callable([R.Tensor((n,), "float32")], R.Tensor((n,), "float32"))
    sig_m = R.Callable([R.Tensor((m,), "float32")], R.Tensor((m,), "float32"))
    assert consistent_equal(sig_n, sig_m)  # a signature's parameters define its variables
    assert not consistent_equal(R.Tensor((n,), "float32"), R.Tensor((m,), "float32"))
    assert consistent_equal(R.Tensor((n,), "float32"), R.Tensor((m,), "float32"),
                            map_free_vars=True)


def test_relax_free_and_bound_variables():
    x = relax.Var("x", R.Tensor((2,), "float32"))
    y = relax.Var("y", R.Tensor((2,), "float32"))
    captured = relax.Var("c", R.Tensor((2,), "float32"))
    other = relax.Var("d", R.Tensor((2,), "float32"))
    fx = relax.Function([x], relax.op.add(x, captured))
    fy = relax.Function([y], relax.op.add(y, captured))
    fz = relax.Function([y], relax.op.add(y, other))
    assert consistent_equal(fx, fy)  # the parameter is defined; the captured var is shared
    assert not consistent_equal(fx, fz)  # different free variables
    assert consistent_equal(fx, fz, map_free_vars=True)
    assert not consistent_equal(relax.Var("x", R.Tensor((2,), "float32")),
                                relax.DataflowVar("x", R.Tensor((2,), "float32")),
                                map_free_vars=True)
    with pytest.raises(ValueError, match=r"lhs at <root>\.body\.args\[1\].*free variables 'c' "
                                         r"and 'd' are different objects"):
        rvm.ir.assert_structural_equal(fx, fz)
