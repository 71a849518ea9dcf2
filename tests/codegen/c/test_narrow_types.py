"""Narrow element types (float16, bfloat16, float8, float4, int4/uint4/int2/uint2) in
kernels: every stored value widens exactly, and casts and stores round (or wrap) to the
bits numpy and ml_dtypes give, on the C backend and the python reference target."""
import numpy as np
import pytest

import rvm
from rvm import te, tir
from rvm.runtime.data_type import FLOAT_FORMATS, DataType

ml_dtypes = pytest.importorskip("ml_dtypes")

TARGETS = ["c", "python"]
NARROW_FLOATS = list(FLOAT_FORMATS)
SUB_BYTE_INTS = ["int4", "uint4", "int2", "uint2"]


def _cast_kernel(src, dst, target, n):
    a = te.placeholder((n,), src, name="A")
    b = te.compute((n,), lambda i: a[i].astype(dst), name="B")
    return rvm.build(te.create_prim_func([a, b]), target=target)["main"]


def _run_cast(values, dst, target):
    values = np.ascontiguousarray(values)
    out = rvm.nd.empty(values.shape, dst)
    _cast_kernel(str(DataType(values.dtype)), dst, target, values.size)(rvm.nd.array(values), out)
    return out.numpy()


def _bits(array):
    return array.view(f"uint{8 * array.dtype.itemsize}")


def _same(got, want):
    """Equal bit patterns, any NaN equal to any NaN."""
    assert got.dtype == want.dtype
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])


def _every_code(dtype):
    """Every value of ``dtype`` (all bit patterns of its storage byte or half-word)."""
    np_dtype = DataType(dtype).numpy_dtype
    if np_dtype.itemsize == 2:
        return np.arange(1 << 16, dtype=np.uint16).view(np_dtype)
    bits = DataType(dtype).bits
    return np.arange(1 << bits, dtype=np.uint8).view(np_dtype)


def _probe_floats(dtype):
    """float32 values that exercise ``dtype``'s rounding: its values, the midpoints
    between neighbours (ties) and one float32 ulp either side, huge and tiny values,
    infinities, NaN and signed zeros, plus random bit patterns."""
    values = np.unique(_every_code(dtype).astype(np.float32))
    values = values[np.isfinite(values)]
    mids = ((values[1:].astype(np.float64) + values[:-1]) / 2).astype(np.float32)
    edges = [np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    top = float(values.max())
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, min(top * 1.01, 3e38),
                        min(top * 4, 3e38), 3.4e38,
                        1e-45, -1e-45, 1e-30, 2.0 ** -127], np.float32)
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([special, values, -values, mids, *edges, noise]).astype(np.float32)


def _sample(values, target):
    """All ``values`` for C; for the (slow) python target, 4096 of them, edges included."""
    if target == "c" or values.size <= 4096:
        return values
    keep = np.random.default_rng(1).choice(values.size, 4096, replace=False)
    return np.concatenate([values[:64], values[-64:], values[np.sort(keep)]])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", NARROW_FLOATS)
def test_every_value_widens_exactly(dtype, target):
    codes = _sample(_every_code(dtype), target)
    got = _run_cast(codes, "float32", target)
    _same(got, codes.astype(np.float32))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", NARROW_FLOATS)
def test_float32_rounds_to_nearest_even_like_numpy(dtype, target):
    x = _sample(_probe_floats(dtype), target)
    with np.errstate(all="ignore"):
        want = x.astype(DataType(dtype).numpy_dtype)
    _same(_run_cast(x, dtype, target), want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn"])
def test_float64_converts_as_numpy_and_ml_dtypes_do(dtype, target):
    # float16 rounds a float64 once; ml_dtypes' types go through float32 first.
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -30, 1 + 2.0 ** -4 +
                  2.0 ** -40, 65519.99, 65520.0, 2.0 ** -25 + 2.0 ** -50, -0.0, np.nan,
                  -np.inf, 1e300, 3.14159], np.float64)
    with np.errstate(all="ignore"):
        want = x.astype(DataType(dtype).numpy_dtype)
    _same(_run_cast(x, dtype, target), want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", SUB_BYTE_INTS)
def test_sub_byte_integers_wrap_like_ml_dtypes(dtype, target):
    ints = np.arange(-20, 21, dtype=np.int32)
    np.testing.assert_array_equal(_run_cast(ints, dtype, target),
                                  ints.astype(DataType(dtype).numpy_dtype))
    floats = np.array([-9.7, -8.5, -1.5, -0.5, 0.5, 1.5, 2.5, 7.6, 17.0, np.nan, np.inf],
                      np.float32)
    with np.errstate(all="ignore"):
        want = floats.astype(DataType(dtype).numpy_dtype)
    np.testing.assert_array_equal(_run_cast(floats, dtype, target), want)
    codes = _every_code(dtype)
    np.testing.assert_array_equal(_run_cast(codes, "int32", target), codes.astype(np.int32))


@pytest.mark.parametrize("target", TARGETS)
def test_narrow_arithmetic_computes_in_float32_and_rounds_when_stored(target):
    n = 64
    a = te.placeholder((n,), "bfloat16", name="A")
    b = te.compute((n,), lambda i: a[i] * a[i] + tir.const(0.1, "bfloat16"), name="B")
    k = te.reduce_axis((0, n), "k")
    s = te.compute((1,), lambda _: te.sum(b[k], axis=k), name="S")
    f = rvm.build(te.create_prim_func([a, b, s]), target=target)["main"]
    x = (np.arange(n, dtype=np.float32) / 7).astype(ml_dtypes.bfloat16)
    out_b, out_s = rvm.nd.empty((n,), "bfloat16"), rvm.nd.empty((1,), "bfloat16")
    f(rvm.nd.array(x), out_b, out_s)
    wide = x.astype(np.float32)
    want = (wide * wide + np.float32(ml_dtypes.bfloat16(0.1))).astype(ml_dtypes.bfloat16)
    _same(out_b.numpy(), want)
    total = ml_dtypes.bfloat16(0)  # the accumulator is a bfloat16 buffer: each step rounds
    for v in want:
        total = ml_dtypes.bfloat16(np.float32(total) + np.float32(v))
    _same(out_s.numpy(), np.array([total]))


def test_tensors_of_narrow_types_round_trip_through_numpy_and_dlpack():
    for dtype in NARROW_FLOATS + SUB_BYTE_INTS:
        codes = _every_code(dtype)[:4].reshape(2, 2)
        arr = rvm.nd.array(codes)
        assert arr.dtype == dtype and arr.shape == (2, 2)
        assert arr.nbytes == codes.nbytes
        _same(arr.numpy(), codes)
        capsule_view = rvm.nd.from_dlpack(arr)
        _same(capsule_view.numpy(), codes)


def test_a_missing_ml_dtypes_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ml_dtypes(name, *args, **kwargs):
        if name == "ml_dtypes":
            raise ImportError("No module named 'ml_dtypes'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ml_dtypes)
    from rvm.runtime.data_type import ml_dtype

    with pytest.raises(ImportError, match="bfloat16 needs the ml_dtypes package"):
        ml_dtype("bfloat16")


def test_kernel_errors_name_narrow_dtypes():
    f = _cast_kernel("float32", "float32", "c", 4)
    with pytest.raises(TypeError, match="expects .*float32.*got dtype bfloat16"):
        f(rvm.nd.array(np.zeros(4, ml_dtypes.bfloat16)), rvm.nd.empty((4,), "float32"))
    with pytest.raises(TypeError, match="got dtype float8_e4m3fn"):
        f(rvm.nd.array(np.zeros(4, ml_dtypes.float8_e4m3fn)), rvm.nd.empty((4,), "float32"))


@pytest.mark.parametrize("engine", ["native", "python"])
def test_the_vm_takes_and_returns_narrow_arrays(engine):
    from rvm import relax
    from rvm.script import ir as I
    from rvm.script import relax as R

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4,), "bfloat16")):
            with R.dataflow():
                y = R.astype(R.multiply(x, x), "float8_e5m2")
                R.output(y)
            return y

    vm = relax.VirtualMachine(relax.build(Module, target="c"), rvm.cpu(), engine=engine)
    x = np.array([1.5, -2.0, 3.0, 0.1], ml_dtypes.bfloat16)
    wide = x.astype(np.float32)
    want = (wide * wide).astype(ml_dtypes.bfloat16).astype(ml_dtypes.float8_e5m2)
    with pytest.raises(ValueError, match="expected dtype bfloat16, got float32"):
        vm["main"](np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="expected dtype bfloat16, got float8_e4m3fn"):
        vm["main"](np.zeros(4, ml_dtypes.float8_e4m3fn))
    _same(vm["main"](x).numpy(), want)


def test_torch_shares_bfloat16_and_float8_tensors_through_dlpack():
    torch = pytest.importorskip("torch")
    for dtype in (torch.bfloat16, torch.float8_e4m3fn):
        t = torch.tensor([1.5, -2.0, 3.0]).to(dtype)
        shared = rvm.nd.from_dlpack(t)
        assert shared.dtype == str(dtype).replace("torch.", "")
        np.testing.assert_array_equal(shared.numpy().astype(np.float32), [1.5, -2.0, 3.0])
        back = torch.from_dlpack(shared)
        assert back.dtype == dtype and back.data_ptr() == t.data_ptr()


@pytest.mark.parametrize("target", TARGETS)
def test_a_narrow_scalar_argument_is_rounded_to_its_type(target):
    n = 3
    a = te.placeholder((n,), "float32", name="A")
    s = tir.Var("s", "bfloat16")
    b = te.compute((n,), lambda i: a[i] + s.astype("float32"), name="B")
    f = rvm.build(te.create_prim_func([a, b, s]), target=target)["main"]
    out = rvm.nd.empty((n,), "float32")
    f(rvm.nd.array(np.zeros(n, np.float32)), out, 1.00390625)  # 1 + 2**-8: a bfloat16 tie
    np.testing.assert_array_equal(out.numpy(), np.full(n, 1.0, np.float32))
