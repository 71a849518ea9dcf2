"""Elementwise operators: legalization, script round trips, and numbers from the c and python
targets."""
import math

import numpy as np

from rvm.relax import op as O
from tests.relax.transform.legalize.harness import (
    Case, booleans, check_legalized, check_numeric, numbered, uniform,
)

F = "float32"
_erf = np.vectorize(math.erf, otypes=["float32"])


def _unary(name, ref, maker=None, dtype=F, shape=(2, 3)):
    spec = (shape, dtype) if maker is None else (shape, dtype, maker)
    return Case(name, getattr(O, name), [spec], ref)


def _binary(name, ref, dtype=F, shapes=((2, 3), (3,)), maker=None):
    specs = [(s, dtype) if maker is None else (s, dtype, maker) for s in shapes]
    return Case(name, getattr(O, name), specs, ref)


CASES = numbered([
    _unary("exp", np.exp), _unary("log", np.log, uniform(0.1, 3)),
    _unary("sqrt", np.sqrt, uniform(0.1, 3)), _unary("rsqrt", lambda a: 1 / np.sqrt(a),
                                                     uniform(0.1, 3)),
    _unary("tanh", np.tanh), _unary("sigmoid", lambda a: 1 / (1 + np.exp(-a))),
    _unary("erf", _erf), _unary("sin", np.sin), _unary("cos", np.cos), _unary("tan", np.tan),
    _unary("asin", np.arcsin, uniform(-0.9, 0.9)), _unary("acos", np.arccos, uniform(-0.9, 0.9)),
    _unary("atan", np.arctan), _unary("sinh", np.sinh), _unary("cosh", np.cosh),
    _unary("asinh", np.arcsinh), _unary("acosh", np.arccosh, uniform(1.1, 3)),
    _unary("atanh", np.arctanh, uniform(-0.9, 0.9)), _unary("negative", np.negative),
    _unary("abs", np.abs), _unary("floor", np.floor), _unary("ceil", np.ceil),
    _unary("round", np.round, uniform(-4, 4)), _unary("sign", np.sign),
    _unary("square", np.square),
    _unary("abs", np.abs, dtype="int32"), _unary("sign", np.sign, dtype="int64"),
    _unary("floor", lambda a: a, dtype="int32"),
    _unary("isnan", np.isnan, lambda rng, s: np.array([[np.nan, 1, np.inf], [0, -np.inf, 2]],
                                                      F)),
    _unary("isinf", np.isinf, lambda rng, s: np.array([[np.nan, 1, np.inf], [0, -np.inf, 2]],
                                                      F)),
    _unary("isfinite", np.isfinite,
           lambda rng, s: np.array([[np.nan, 1, np.inf], [0, -np.inf, 2]], F)),
    _unary("logical_not", np.logical_not, dtype="bool"),
    _binary("add", np.add), _binary("subtract", np.subtract), _binary("multiply", np.multiply),
    _binary("divide", np.divide, maker=uniform(0.5, 2)),
    _binary("floor_divide", np.floor_divide, maker=uniform(-4, 4)),
    _binary("power", np.power, maker=uniform(0.5, 2)), _binary("maximum", np.maximum),
    _binary("minimum", np.minimum), _binary("mod", np.fmod, maker=uniform(0.5, 4)),
    _binary("floor_mod", np.mod, maker=uniform(-4, 4)),
    _binary("floor_divide", np.floor_divide, dtype="int64",
            maker=lambda rng, s: rng.choice([-7, -3, -1, 1, 2, 5], s)),
    _binary("floor_mod", np.mod, dtype="int32",
            maker=lambda rng, s: rng.choice([-7, -3, -1, 1, 2, 5], s).astype("int32")),
    _binary("add", np.add, dtype="int32", shapes=((4, 1), (1, 5))),
    _binary("equal", np.equal, dtype="int32", shapes=((3,), (2, 3))),
    _binary("not_equal", np.not_equal), _binary("less", np.less),
    _binary("less_equal", np.less_equal, dtype="int64"), _binary("greater", np.greater),
    _binary("greater_equal", np.greater_equal),
    _binary("logical_and", np.logical_and, dtype="bool"),
    _binary("logical_or", np.logical_or, dtype="bool"),
    _binary("logical_xor", np.logical_xor, dtype="bool"),
    Case("where", O.where, [((2, 1), "bool"), ((3,), F), ((2, 3), F)], np.where),
    Case("clip", lambda x: O.clip(x, -0.5, 1), [((2, 3), F)], lambda a: np.clip(a, -0.5, 1)),
    Case("clip_int", lambda x: O.clip(x, 0, 6), [((2, 3), "int32")],
         lambda a: np.clip(a, 0, 6)),
    Case("astype", lambda x: O.astype(x, "int32"), [((2, 3), F)], lambda a: a.astype("int32")),
    Case("astype_bool", lambda x: O.astype(x, "float32"), [((4,), "bool")],
         lambda a: a.astype("float32")),
    Case("add_symbolic", O.add, [(("n", 3), F), ((3,), F)], np.add, sizes={"n": 5}),
    Case("where_symbolic", O.where, [(("n", 1), "bool"), (("n", "m"), F), ((1,), F)], np.where,
         sizes={"n": 4, "m": 2}),
    Case("relu_symbolic", O.nn.relu, [(("n",), F)], lambda a: np.maximum(a, 0), sizes={"n": 7}),
])


def test_legalized_and_round_trips(case):
    check_legalized(case)


def test_built_kernels_match_numpy(vm, case):
    check_numeric(vm, case)


def test_booleans_maker_is_bool():
    assert booleans()(np.random.default_rng(0), (2,)).dtype == bool
