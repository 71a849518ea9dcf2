"""float16, bfloat16, int8 and uint8 operators through the C target: elementwise, matmul,
dense (linear), conv2d, reductions and casts, against numpy, with weights as constants
that survive export and reload on both VM engines.

Tolerances, per type: a narrow float result is the float64 result rounded once (sums and
products accumulate in float32), so it is within one unit in the last place of the type
(float16: 2**-10 relative, bfloat16: 2**-7) plus float32's accumulation error on
cancelling sums (absolute 1e-3 for float16, 1e-2 for bfloat16 on values of order 10).
int8 and uint8 results are exact: they wrap modulo 2**8 as numpy's do, and an int32
``out_dtype`` accumulates without wrapping.
"""
import numpy as np
import pytest

import rvm
from rvm import relax
from rvm.relax import BlockBuilder
from rvm.relax.op import binary, linear_algebra, statistical, unary
from rvm.relax.op.nn import activation, convolution
from rvm.runtime.data_type import DataType

ml_dtypes = pytest.importorskip("ml_dtypes")

DTYPES = ["float16", "bfloat16", "int8", "uint8"]
#: (rtol, atol) of the narrow float types; the integer types are exact.
TOLERANCE = {"float16": (2.0 ** -10, 1e-3), "bfloat16": (2.0 ** -7, 1e-2)}


def _data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    np_dtype = DataType(dtype).numpy_dtype
    if dtype == "int8":
        return rng.integers(-128, 128, shape).astype(np_dtype)
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np_dtype)
    return (rng.standard_normal(shape) * 2).astype(np_dtype)


def _wide(array):
    return array.astype(np.float64) if array.dtype.kind not in "iu" else array.astype(np.int64)


def _cases(dtype):
    """name -> (make(params, constants), inputs, constants, reference(inputs + constants),
    result dtype)."""
    x, y = _data(dtype, (3, 40), 0), _data(dtype, (3, 40), 1)
    a, b = _data(dtype, (5, 64), 2), _data(dtype, (64, 6), 3)
    w = _data(dtype, (7, 64), 4)
    img, ker = _data(dtype, (1, 3, 6, 6), 5), _data(dtype, (4, 3, 3, 3), 6)
    f32 = "float32"

    def conv(d, k):
        out = np.zeros((1, 4, 6, 6), d.dtype)
        padded = np.pad(d, ((0, 0), (0, 0), (1, 1), (1, 1)))
        for i in range(6):
            for j in range(6):
                out[0, :, i, j] = np.tensordot(k, padded[0, :, i:i + 3, j:j + 3], 3)
        return out

    cases = {
        "add": (lambda p, c: binary.add(p[0], c[0]), [x], [y], lambda v: v[0] + v[1], dtype),
        "multiply": (lambda p, c: binary.multiply(p[0], p[1]), [x, y], [],
                     lambda v: v[0] * v[1], dtype),
        "maximum": (lambda p, c: binary.maximum(p[0], p[1]), [x, y], [],
                    lambda v: np.maximum(v[0], v[1]), dtype),
        "matmul": (lambda p, c: linear_algebra.matmul(p[0], p[1]), [a, b], [],
                   lambda v: v[0] @ v[1], dtype),
        "dense": (lambda p, c: linear_algebra.linear(p[0], c[0]), [a], [w],
                  lambda v: v[0] @ v[1].T, dtype),
        "conv2d": (lambda p, c: convolution.conv2d(p[0], c[0], padding=(1, 1)), [img], [ker],
                   lambda v: conv(v[0], v[1]), dtype),
        "sum": (lambda p, c: statistical.sum(p[0], axis=[1]), [a], [],
                lambda v: v[0].sum(1), dtype),
        "max": (lambda p, c: statistical.max(p[0], axis=[1]), [a], [],
                lambda v: v[0].max(1), dtype),
        "to_float32": (lambda p, c: unary.astype(p[0], f32), [x], [], lambda v: v[0], f32),
    }
    if DataType(dtype).is_float:
        cases["relu"] = (lambda p, c: activation.relu(p[0]), [x], [],
                         lambda v: np.maximum(v[0], 0), dtype)
        cases["mean"] = (lambda p, c: statistical.mean(p[0], axis=[1]), [a], [],
                         lambda v: v[0].mean(1), dtype)
        cases["from_float32"] = (lambda p, c: unary.astype(p[0], dtype),
                                 [_data("float32", (3, 40), 7)], [], lambda v: v[0], dtype)
        cases["to_int8"] = (lambda p, c: unary.astype(p[0], "int8"), [x], [],
                            lambda v: np.trunc(v[0]), "int8")
    else:
        cases["matmul_int32"] = (lambda p, c: linear_algebra.matmul(p[0], p[1], "int32"),
                                 [a, b], [], lambda v: v[0] @ v[1], "int32")
        other = "uint8" if dtype == "int8" else "int8"
        cases[f"to_{other}"] = (lambda p, c: unary.astype(p[0], other), [x], [],
                                lambda v: v[0], other)
        cases["to_float16"] = (lambda p, c: unary.astype(p[0], "float16"), [x], [],
                               lambda v: v[0], "float16")
        cases["to_bfloat16"] = (lambda p, c: unary.astype(p[0], "bfloat16"), [x], [],
                                lambda v: v[0], "bfloat16")
    return cases


def _module(cases):
    bb = BlockBuilder()
    for name, (make, inputs, constants, _, _) in cases.items():
        params = [relax.Var(f"p{k}", relax.TensorStructInfo(v.shape, str(DataType(v.dtype))))
                  for k, v in enumerate(inputs)]
        with bb.function(name, params):
            with bb.dataflow():
                out = bb.emit_output(make(params, [relax.const(c) for c in constants]))
            bb.emit_func_output(out)
    return bb.get()


def _expected(reference, values, dtype):
    """The reference computed wide (float64; integers wrapping as numpy's int64 then cast),
    rounded once to ``dtype``."""
    wide = reference([_wide(v) for v in values])
    np_dtype = DataType(dtype).numpy_dtype
    if np_dtype.kind in "iu":
        return wide.astype(np.int64).astype(np_dtype)
    return wide.astype(np.float32).astype(np_dtype) if dtype == "bfloat16" else \
        wide.astype(np_dtype)


def _check(got, want, dtype):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if dtype in TOLERANCE:
        rtol, atol = TOLERANCE[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module", params=DTYPES)
def built(request, tmp_path_factory):
    dtype = request.param
    cases = _cases(dtype)
    path = tmp_path_factory.mktemp("narrow") / f"{dtype}.rvm"
    relax.build(_module(cases), target="c").export_library(str(path))
    return dtype, cases, rvm.runtime.load_module(str(path))


@pytest.mark.parametrize("engine", ["native", "python"])
def test_operators_match_numpy_per_type_after_export_and_reload(built, engine):
    dtype, cases, executable = built
    vm = relax.VirtualMachine(executable, rvm.cpu(), engine=engine)
    for name, (_, inputs, constants, reference, out_dtype) in cases.items():
        got = vm[name](*inputs).numpy()
        want = _expected(reference, inputs + constants, out_dtype)
        try:
            _check(got, want, out_dtype)
        except AssertionError as err:
            raise AssertionError(f"{dtype} {name} on {engine}: {err}") from None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_sums_round_once_instead_of_at_every_step(dtype):
    # 4096 ones then -4096 ones and a small value: a float16 accumulator stops at 2048 and a
    # bfloat16 one at 256, so stepwise rounding gives a wrong sum; float32 gives 0.25
    values = np.concatenate([np.ones(4096), -np.ones(4096), [0.25]]).astype(
        DataType(dtype).numpy_dtype)
    x = relax.Var("x", relax.TensorStructInfo(values.shape, dtype))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(statistical.sum(x))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), target="c"), rvm.cpu())
    assert float(vm["main"](values).numpy()) == 0.25


CAST_TYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64",
              "bool"]


def _cast_values(src, dst):
    """Values each of numpy's casts defines (no negative float to an unsigned type, no
    value past the target's range), ties and fractions included."""
    values = np.array([0, 1, 2.75, 100, 0.5, 7, 126.5, 3.25])
    if not DataType(dst).is_uint and dst != "bool":
        values = np.concatenate([values, -values])
    if src == "bool":
        return values > 1
    return values.astype(DataType(src).numpy_dtype)


def test_every_cast_between_the_narrow_and_wide_types_matches_numpy():
    bb = BlockBuilder()
    cases = {}
    for src in CAST_TYPES:
        for dst in CAST_TYPES:
            if src == dst:
                continue
            values = _cast_values(src, dst)
            x = relax.Var("x", relax.TensorStructInfo(values.shape, src))
            with bb.function(f"{src}_to_{dst}", [x]):
                with bb.dataflow():
                    out = bb.emit_output(unary.astype(x, dst))
                bb.emit_func_output(out)
            cases[f"{src}_to_{dst}"] = (values, dst)
    vm = relax.VirtualMachine(relax.build(bb.get(), target="c"), rvm.cpu())
    for name, (values, dst) in cases.items():
        got, want = vm[name](values).numpy(), values.astype(DataType(dst).numpy_dtype)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                      err_msg=name)


def _softmax_stepwise(x):
    """Softmax as onnx defines it in the input's type (its reference computes each stage
    in numpy's float16, whose sums accumulate in float32): ``x - max``, its exp, the
    sum and the quotient each rounded to the type."""
    wide = np.float32
    shifted = (x.astype(wide) - x.astype(wide).max(-1, keepdims=True)).astype(x.dtype)
    exp = np.exp(shifted.astype(wide)).astype(x.dtype)
    total = exp.astype(wide).sum(-1, keepdims=True).astype(x.dtype)
    return (exp.astype(wide) / total.astype(wide)).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_softmax_rounds_each_stage_and_sums_in_float32(dtype):
    # row 0: 4096 equal values, each probability 2**-12 (a float16 sum stops at 2048, a
    # bfloat16 one at 256); rows 1-2: random values, every stage rounded as defined
    rng = np.random.default_rng(0)
    np_dtype = DataType(dtype).numpy_dtype
    values = np.concatenate([np.zeros((1, 4096)), rng.standard_normal((2, 4096)) * 3])
    values = values.astype(np_dtype)
    x = relax.Var("x", relax.TensorStructInfo(values.shape, dtype))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(activation.softmax(x))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), target="c"), rvm.cpu())
    got = vm["main"](values).numpy()
    assert got.dtype == np_dtype
    assert np.all(got[0].astype(np.float64) == 2.0 ** -12)
    np.testing.assert_array_equal(got.astype(np.float32),
                                  _softmax_stepwise(values).astype(np.float32))
