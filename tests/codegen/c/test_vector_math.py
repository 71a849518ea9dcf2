"""Vectorized loops call glibc's vector math (libmvec) where the compiler links it
(rvm.runtime.compiler.VECTOR_MATH_FLAGS): the results stay within 4 ulp of the exactly
rounded value over the whole float range, with IEEE special values (overflow to inf,
underflow to 0, NaN, infinities, signed zeros) as libm gives them, and the same at any
position in the loop (vector body or scalar remainder)."""
import numpy as np
import pytest

import rvm
from rvm.driver.build_module import build
from rvm.runtime.compiler import VECTOR_MATH_FUNCTIONS, default_compiler
from rvm.tir import op as T

pytestmark = pytest.mark.skipif(not default_compiler().vector_math,
                                reason="the C compiler does not link glibc's libmvec")


def _kernel(op):
    """y = op(x) over n elements, scheduled by the default rules (a vector loop and its
    predicated remainder)."""
    from rvm import te, tir
    from rvm.dlight import CPUInfo, RULES, schedule_func

    n = tir.Var("n", "int64")
    x = te.placeholder((n,), "float32", name="x")
    y = te.compute((n,), lambda i: op(x[i]), name="y")
    func = schedule_func(te.create_prim_func([x, y]), RULES, CPUInfo(64, 1))
    assert func.get_attr("tir.is_scheduled") == "generic"
    return build(func.with_attr("global_symbol", "f"), "c")["f"]


def _inputs():
    rng = np.random.default_rng(35)
    bits = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    wide = bits.view(np.float32)  # every exponent, both signs, NaNs
    ramps = [np.linspace(-110, 110, 20011, dtype=np.float32),  # exp's overflow and underflow
             np.linspace(-6, 6, 12007, dtype=np.float32),  # tanh and erf saturating
             np.linspace(1e-8, 3, 5003, dtype=np.float32)]  # small arguments, log near 1
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.73, -87.3, -103.9,
                        -104.0, 1e-45, -1e-45, 3.4e38, -3.4e38, 1e-30, 1.0], np.float32)
    return np.concatenate([wide, *ramps, special])


def _ulp_distance(a, b):
    """|a - b| in units of float32 ulps (ordered integers), NaN equal to NaN."""
    ia, ib = (v.view(np.int32).astype(np.int64) for v in (a, b))
    ia = np.where(ia < 0, np.int64(-(1 << 31)) - ia, ia)
    ib = np.where(ib < 0, np.int64(-(1 << 31)) - ib, ib)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.abs(ia - ib))


REFERENCE = {"expf": (T.exp, np.exp), "logf": (T.log, np.log), "tanhf": (T.tanh, np.tanh),
             "erff": (T.erf, None),
             # x ** 2.5 and x ** 0.5: powf's vector form, one operand a constant (a small
             # integer power is a product: rvm.tir.arith's SMALL_POWERS)
             "powf": (lambda v: T.power(v, T.const(2.5, "float32")), lambda v: v ** 2.5),
             "powf_sqrt": (lambda v: T.power(v, T.const(0.5, "float32")), np.sqrt)}


@pytest.mark.parametrize("name", VECTOR_MATH_FUNCTIONS + ("powf_sqrt",))
def test_vector_math_is_within_4_ulp_of_the_exact_result(name):
    import math

    op, ref = REFERENCE[name]
    x = _inputs()
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64)) if ref is not None else \
            np.vectorize(math.erf, otypes=[np.float64])(np.where(np.isnan(x), 0, x))
        exact = np.where(np.isnan(x), np.nan, exact).astype(np.float32)
    y = rvm.nd.empty(x.shape, "float32")
    _kernel(op)(rvm.nd.array(x), y)
    got = y.numpy()
    assert np.array_equal(np.isnan(got), np.isnan(exact)), name
    assert np.array_equal(np.isinf(got), np.isinf(exact)), name
    assert _ulp_distance(got, exact).max() <= 4, name
    # the same value in the vector body and in a remainder of any length
    for start in (1, 3, 17):
        part = rvm.nd.empty((x.size - start,), "float32")
        _kernel(op)(rvm.nd.array(x[start:]), part)
        np.testing.assert_array_equal(part.numpy(), got[start:])


def test_vectorized_kernels_link_the_vector_forms():
    from rvm.codegen.c.preamble import render_preamble

    assert "#pragma omp declare simd notinbranch\nfloat tanhf(float);" in render_preamble(True)
    assert "-lmvec" in default_compiler().flags()


def _libm_expf(x):
    """The C library's scalar expf on each element (the reference libmvec's lanes fall back to)."""
    import ctypes
    import ctypes.util

    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.expf.restype = ctypes.c_float
    libm.expf.argtypes = [ctypes.c_float]
    return np.array([libm.expf(float(v)) for v in x], np.float32)


def test_exp_below_the_fast_range_is_libm_expf_bit_for_bit():
    """rvm_expf (the preamble's EXP_HELPER) moves arguments below -104 (a softmax's masked
    scores, -3.4e38 or -inf) onto libmvec's fast path and returns +0 for them: below libmvec's
    fast range (-87.3) every result, subnormal ones near the threshold included, is what the
    scalar expf gives (as libmvec's fallback gave), above it within 4 ulp of the exact value,
    in the vector body and in a remainder of any length, mixed with ordinary lanes."""
    edge = np.float32(-104.0)
    around = [np.nextafter(edge, np.float32(-np.inf)), edge, np.nextafter(edge, np.float32(0))]
    x = np.concatenate([
        np.array([-3.4e38, -np.inf, np.nan, -np.nan, np.inf, 0.0, -0.0, -87.3, -87.4, -103.97,
                  -103.98, -1e30, 88.8, -1.0, 2.5, *around], np.float32),
        np.linspace(-106, -86, 2003, dtype=np.float32),  # subnormal results and the edge
        np.where(np.arange(301) % 2 == 0, np.float32(-3.4e38),
                 np.linspace(-4, 4, 301, dtype=np.float32))])  # a causal mask's pattern
    want = _libm_expf(x)
    assert np.count_nonzero((want > 0) & (want < np.finfo(np.float32).tiny)) > 100
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64)).astype(np.float32)
    slow = ~(x >= -87.34)  # below libmvec's fast range, and NaN
    for start in (0, 1, 5, 16, 23):
        got = rvm.nd.empty((x.size - start,), "float32")
        _kernel(T.exp)(rvm.nd.array(x[start:]), got)
        got, below = got.numpy(), slow[start:]
        np.testing.assert_array_equal(got[below].view(np.uint32),
                                      want[start:][below].view(np.uint32))
        assert _ulp_distance(got[~below], exact[start:][~below]).max() <= 4


def test_float32_exp_calls_the_helper_and_float64_exp_libm():
    from rvm import te, tir
    from rvm.codegen.c.preamble import EXP_HELPER

    for dtype, call in (("float32", "rvm_expf("), ("float64", " exp(")):
        n = tir.Var("n", "int64")
        x = te.placeholder((n,), dtype, name="x")
        y = te.compute((n,), lambda i: T.exp(x[i]), name="y")
        func = te.create_prim_func([x, y]).with_attr("global_symbol", "f")
        source = build(func, "c").get_source()
        assert call in source.split(EXP_HELPER, 1)[1], dtype


@pytest.mark.parametrize("power", [2.0, 3.0, 4.0])
def test_small_constant_powers_are_products_within_3_ulp(power):
    """x ** 2, 3 and 4 are products (the simplifier's SMALL_POWERS: libmvec's powf is scalar
    on negative bases): within n - 1 ulp of the exact power, with powf's zeros (signed),
    infinities, NaN, overflow and subnormal results, in the vector body and a remainder."""
    x = np.concatenate([_inputs(), np.array([-0.0, 1e-15, -1e-15, 2e-13, -3e-13, 7e12, -7e12,
                                             1.9e19, -1.9e19], np.float32)])
    with np.errstate(all="ignore"):
        exact = (x.astype(np.float64) ** power).astype(np.float32)
    kernel = _kernel(lambda v: T.power(v, T.const(power, "float32")))
    for start in (0, 3):
        got = rvm.nd.empty((x.size - start,), "float32")
        kernel(rvm.nd.array(x[start:]), got)
        got, want = got.numpy(), exact[start:]
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.array_equal(np.signbit(got), np.signbit(want))
        assert _ulp_distance(got, want).max() <= power - 1


def test_only_small_integer_powers_become_products():
    import re

    from rvm import te, tir
    from rvm.codegen.c.preamble import EXP_HELPER

    cases = [("float32", 3.0, False), ("float64", 2.0, False), ("float32", 2.5, True),
             ("float32", 5.0, True)]
    for dtype, power, calls in cases:
        n = tir.Var("n", "int64")
        x = te.placeholder((n,), dtype, name="x")
        y = te.compute((n,), lambda i: T.power(x[i], T.const(power, dtype)), name="y")
        func = te.create_prim_func([x, y]).with_attr("global_symbol", "f")
        body = build(func, "c").get_source().split(EXP_HELPER, 1)[1]
        assert bool(re.search(r"\bpowf?\(", body)) == calls, (dtype, power)
    n = tir.Var("n", "int64")
    x = te.placeholder((n,), "float32", name="x")
    y = te.compute((n,), lambda i: T.power(x[i], x[i]), name="y")  # a run-time exponent
    body = build(te.create_prim_func([x, y]).with_attr("global_symbol", "f"), "c").get_source()
    assert "powf(x[" in body.split(EXP_HELPER, 1)[1]


def test_kernel_variables_never_take_the_names_of_the_vector_math_functions():
    """rvm_expf calls expf: a kernel variable named expf (or any vector math function) is
    renamed, so no local declaration can shadow a function the helpers or the kernel call."""
    from rvm import te, tir
    from rvm.codegen.c.expr import RESERVED

    assert set(VECTOR_MATH_FUNCTIONS) <= RESERVED
    n = tir.Var("expf", "int64")
    x = te.placeholder((n,), "float32", name="powf")
    y = te.compute((n,), lambda i: T.exp(x[i]), name="logf")
    f = build(te.create_prim_func([x, y]).with_attr("global_symbol", "f"), "c")["f"]
    a = np.array([-3.4e38, -1.0, 0.0, 1.0, np.nan], np.float32)
    out = rvm.nd.empty(a.shape, "float32")
    f(rvm.nd.array(a), out)
    assert _ulp_distance(out.numpy(), np.exp(a.astype(np.float64)).astype(np.float32)).max() <= 4
