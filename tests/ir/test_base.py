import numpy as np
import pytest

from rvm import ir, tir
from rvm.ir.module import IRModule
from rvm.ir.base import assert_structural_equal, structural_equal, structural_hash


class _Fn(ir.BaseFunc):
    _fields = ("params", "body", "attrs")
    _binding_fields = ("params",)

    def __init__(self, params, body, attrs=None):
        self.params = list(params)
        self.body = body
        self.attrs = attrs or {}


def _fn(names=("x", "y"), dtype="int32", k=1):
    x, y = (tir.Var(n, dtype) for n in names)
    return _Fn([x, y], x * y + k)


def test_alpha_renamed_functions_are_equal_and_hash_equal():
    a, b = _fn(("x", "y")), _fn(("p", "q"))
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert_structural_equal(a, b)


def test_swapped_variables_are_not_equal():
    x, y = tir.Var("x"), tir.Var("y")
    a = _Fn([x, y], x - y)
    b = _Fn([x, y], y - x)
    assert not structural_equal(a, b)
    with pytest.raises(ValueError, match=r"<root>\.body\.a"):
        assert_structural_equal(a, b)


def test_var_bijection_is_enforced_both_ways():
    x, y, z = tir.Var("x"), tir.Var("y"), tir.Var("z")
    assert not structural_equal(x + x, y + z, map_free_vars=True)
    assert not structural_equal(y + z, x + x, map_free_vars=True)
    assert structural_equal(y + z, x + y, map_free_vars=True)


def test_dtype_mismatch_names_path_and_values():
    with pytest.raises(ValueError) as info:
        assert_structural_equal(_fn(dtype="int32"), _fn(dtype="int64"))
    msg = str(info.value)
    assert "<root>.params[0].dtype" in msg and "int32" in msg and "int64" in msg


def test_constant_mismatch():
    with pytest.raises(ValueError, match=r"<root>\.body\.b\.value"):
        assert_structural_equal(_fn(k=1), _fn(k=2))
    assert structural_hash(_fn(k=1)) != structural_hash(_fn(k=2))


def test_attribute_mismatch():
    a = _fn().with_attr("global_symbol", "main")
    b = _fn().with_attr("global_symbol", "other")
    with pytest.raises(ValueError, match=r'<root>\.attrs\["global_symbol"\]'):
        assert_structural_equal(a, b)
    with pytest.raises(ValueError, match="keys differ"):
        assert_structural_equal(a, _fn())


def test_node_type_mismatch():
    x = tir.Var("x")
    with pytest.raises(ValueError, match="Add vs Sub"):
        assert_structural_equal(x + 1, x - 1)


def test_modules_compare_by_function_name():
    m1 = IRModule({"f": _fn(("a", "b")), "g": _fn(k=3)})
    m2 = IRModule({"g": _fn(k=3), "f": _fn(("c", "d"))})
    assert_structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)
    m3 = IRModule({"f": _fn(), "h": _fn(k=3)})
    with pytest.raises(ValueError, match="only in lhs"):
        assert_structural_equal(m1, m3)
    m4 = IRModule({"f": _fn(), "g": _fn(k=4)})
    with pytest.raises(ValueError, match=r'<root>\.functions\[I\.GlobalVar\("g"\)\]\.body\.b\.value'):
        assert_structural_equal(m1, m4)


def test_map_free_vars_false_requires_identical_free_vars():
    x, y = tir.Var("x"), tir.Var("y")
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert not structural_equal(x + 1, y + 1)  # the default, as in TVM
    assert not structural_equal(x + 1, y + 1, map_free_vars=False)
    assert structural_equal(x + 1, x + 1, map_free_vars=False)
    assert structural_equal(_fn(("a", "b")), _fn(("c", "d")), map_free_vars=False)


def test_arrays_compare_by_value():
    assert structural_equal([np.ones(3, "float32")], [np.ones(3, "float32")])
    assert not structural_equal([np.ones(3, "float32")], [np.zeros(3, "float32")])
    assert not structural_equal([np.ones(3, "float32")], [np.ones(3, "float64")])


def test_hash_is_deterministic_and_distinguishes_structure():
    x = tir.Var("x")
    assert structural_hash(x + 1, map_free_vars=True) == structural_hash(tir.Var("z") + 1,
                                                                         map_free_vars=True)
    assert structural_hash(x + 1) != structural_hash(x - 1)
    assert structural_hash(x + x) != structural_hash(x + tir.Var("w"))


def test_hash_agrees_with_equality_on_float_corner_cases():
    for a, b in [(0.0, -0.0), (float("nan"), float("nan"))]:
        assert structural_equal([a], [b])
        assert structural_hash([a]) == structural_hash([b])
    assert not structural_equal([1], [True]) and structural_hash([1]) != structural_hash([True])


def test_module_functions_scope_their_variables_separately():
    """A variable object shared by two functions equals two separate variables."""
    from rvm.ir.module import IRModule
    from rvm.tir.expr import Var
    from rvm.tir.function import PrimFunc
    from rvm.tir.stmt import Evaluate

    def func(n, m):
        return PrimFunc([n, m], Evaluate(n + m))

    shared = Var("n", "int64")
    lhs = IRModule({"f": func(shared, Var("a", "int64")), "g": func(Var("b", "int64"), shared)})
    rhs = IRModule({"f": func(Var("n", "int64"), Var("a", "int64")),
                    "g": func(Var("b", "int64"), Var("n", "int64"))})
    assert structural_equal(lhs, rhs)
    assert structural_hash(lhs) == structural_hash(rhs)


def test_hash_map_free_vars_matches_equality():
    """structural_hash(x, map_free_vars=False): free variables are themselves; variables a node
    defines (parameters, and the symbolic dimensions of their struct info) are still renamed."""
    from rvm.script import from_source

    x, y = tir.Var("x"), tir.Var("y")
    assert structural_hash(x + 1, map_free_vars=False) == structural_hash(x + 1,
                                                                          map_free_vars=False)
    assert structural_hash(x + 1, map_free_vars=False) != structural_hash(y + 1,
                                                                          map_free_vars=False)
    assert not structural_equal(x + 1, y + 1, map_free_vars=False)
    text = '''
@R.function
def f(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n", 4), "float32"):
    n = T.int64()
    y: R.Tensor((n, 4), "float32") = R.add(x, x)
    return y
'''
    a, b = from_source(text), from_source(text)
    assert structural_equal(a, b, map_free_vars=False)
    assert structural_hash(a, map_free_vars=False) == structural_hash(b, map_free_vars=False)


@pytest.mark.parametrize("map_free_vars", [False, True])
def test_equality_is_symmetric_and_agrees_with_the_hash_on_random_expressions(map_free_vars):
    """Random expressions over shared variables, fresh free variables and let bindings: two
    builds from one seed (same structure, new bound and fresh variables) are equal iff no
    fresh free variable occurs or map_free_vars is on; unrelated pairs almost never are;
    equality is symmetric and agrees with the hash throughout."""
    import random

    shared = [tir.Var(n, "int32") for n in "abc"]

    def build(seed):
        rng = random.Random(seed)
        fresh = []

        def expr(depth, env):
            if depth == 0 or rng.random() < 0.3:
                pick = rng.random()
                if pick < 0.3:
                    return tir.const(rng.randint(0, 2), "int32")
                if pick < 0.9:
                    return rng.choice(env + shared)
                fresh.append(tir.Var("f", "int32"))
                return fresh[-1]
            if rng.random() < 0.25:
                bound = tir.Var("t", "int32")
                return tir.Let(bound, expr(depth - 1, env), expr(depth - 1, env + [bound]))
            op = rng.choice([tir.Add, tir.Mul, tir.Sub])  # constructors: nothing folds away
            return op(expr(depth - 1, env), expr(depth - 1, env))

        return expr(4, []), bool(fresh)

    def check(a, b):
        equal = structural_equal(a, b, map_free_vars)
        assert equal == structural_equal(b, a, map_free_vars), (a, b)
        assert equal == (structural_hash(a, map_free_vars) == structural_hash(b, map_free_vars))
        return equal

    counts = {True: 0, False: 0}
    for seed in range(200):
        (a, has_fresh), (b, _) = build(seed), build(seed)
        assert check(a, b) == (map_free_vars or not has_fresh), (a, b)
        counts[has_fresh] += 1
        other, _ = build(seed + 1000)
        check(a, other)
    assert counts[True] > 10 and counts[False] > 10
