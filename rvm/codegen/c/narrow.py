"""Narrow element types in C: float16, bfloat16, the float8 and float4 formats, and the
sub-byte integers int4, uint4, int2, uint2.

C has none of them, so a kernel stores them in integer types of their width (one byte
for the sub-byte ones, see ``rvm.runtime.data_type``) and computes with wider ones: a
narrow float is a C ``float`` in expressions, widened exactly when loaded, and rounded
to nearest even when stored or cast (``rvm_to_<dtype>``). The conversions follow
numpy (float16) and ml_dtypes (the others), whose arrays hold the same bits: a
float64 goes to float16 directly and to the other formats through float32; NaN,
infinities and overflow follow each format's kind (``FLOAT_FORMATS``). A sub-byte
integer computes as an 8-bit one and wraps to its width when cast; its byte holds the
low bits (the others zero, as ml_dtypes stores them) and loads ignore the others.

float16 widens without branches (loops of it vectorize) and rounds with the compiler's
``_Float16`` where it has one (gcc 12 and clang on x86-64 and AArch64: one instruction
with F16C), else with a portable helper giving the same bits. The helpers are generated
from ``FLOAT_FORMATS`` into every translation unit's preamble (``render_narrow_helpers``);
the emitter asks this module for the storage and computation types of a dtype and for
the C text of loads, stores and casts.
"""
from rvm.runtime.data_type import FLOAT_FORMATS

_KINDS = {"ieee": 0, "fn": 1, "fnuz": 2, "sat": 3, "e8m0": 4}
_SUB_BYTE_INTS = {"int4": "int8_t", "uint4": "uint8_t", "int2": "int8_t", "uint2": "uint8_t"}

_GENERIC = r"""
/* Narrow floats: E exponent bits, M mantissa bits, bias B, kind K (0 ieee, 1 fn, 2 fnuz,
 * 3 sat, 4 e8m0); see rvm/codegen/c/narrow.py. */
static inline float rvm_narrow_decode(uint32_t v, int E, int M, int B, int K) {
  if (K == 4) return v == 0xffu ? NAN : ldexpf(1.0f, (int)v - 127);
  const uint32_t smask = 1u << (E + M), mmask = (1u << M) - 1u, emask = (1u << E) - 1u;
  const uint32_t mag = v & (smask - 1u);
  const uint32_t e = mag >> M, m = mag & mmask;
  if ((K == 2 && v == smask) || (K == 1 && mag == smask - 1u)) return NAN;
  float out;
  if (K == 0 && e == emask) out = m ? NAN : INFINITY;
  else if (e == 0) out = ldexpf((float)m, 1 - B - M);
  else out = ldexpf((float)(m | (1u << M)), (int)e - B - M);
  return (v & smask) ? -out : out;
}

static inline uint32_t rvm_narrow_encode(float x, int E, int M, int B, int K) {
  const uint32_t smask = 1u << (E + M), mmask = (1u << M) - 1u, emask = (1u << E) - 1u;
  if (K == 4) { /* unsigned powers of two; no zero */
    if (!(x > 0.0f) || isinf(x)) return 0xffu;
    if (x < 0x1p-126f) return x > 0x1p-127f ? 1u : 0u; /* float32 subnormals, as ml_dtypes */
    int k;
    const float f = 2.0f * frexpf(x, &k); /* x = f * 2^(k-1), f in [1, 2) */
    const int code = k - 1 + 127 + (int)nearbyintf(f) - 1;
    return code < 0 ? 0u : code > 254 ? 0xffu : (uint32_t)code;
  }
  const uint32_t sign = signbit(x) ? smask : 0u;
  const uint32_t nan = K == 0 ? (emask << M) | (1u << (M - 1)) : K == 1 ? smask - 1u
                       : K == 2 ? smask : 0u;
  const uint32_t maxcode = K == 0 ? (((emask - 1u) << M) | mmask) : K == 1 ? smask - 2u
                           : smask - 1u;
  if (isnan(x)) return K == 2 ? nan : K == 3 ? (sign ^ smask) : sign | nan;
  if (isinf(x)) return K == 0 ? sign | (emask << M) : K == 3 ? sign | maxcode : nan;
  const float a = fabsf(x);
  if (a == 0.0f) return K == 2 ? 0u : sign;
  int k;
  frexpf(a, &k);
  const int e = k - 1, emin = 1 - B; /* a in [2^e, 2^(e+1)) */
  const float q = nearbyintf(ldexpf(a, -((e < emin ? emin : e) - M)));
  const int64_t code = e < emin ? (int64_t)q
                       : ((int64_t)(e + B) << M) + (int64_t)q - ((int64_t)1 << M);
  if (code > (int64_t)maxcode) return K == 0 ? sign | (emask << M) : K == 3 ? sign | maxcode : nan;
  if (K == 2 && code == 0) return 0u;
  return sign | (uint32_t)code;
}

/* float16 -> float32 without branches, so loops of it vectorize: the exponent and
 * mantissa shifted into place are 2^-112 times the value (a float32 subnormal for a float16
 * subnormal), the product by 2^112 exact; infinities and NaN then get the top exponent. */
static inline float rvm_load_float16(uint16_t h) {
  const uint32_t em = h & 0x7fffu, shifted = em << 13;
  float f;
  memcpy(&f, &shifted, 4);
  f *= 0x1p112f;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits |= (em >= 0x7c00u ? 0x7f800000u : 0u) | ((uint32_t)(h & 0x8000u) << 16);
  memcpy(&f, &bits, 4);
  return f;
}

#if defined(__FLT16_MAX__) && !defined(RVM_PORTABLE_FLOAT16)
/* The compiler's _Float16 rounds as IEEE does (one instruction with F16C); the portable
 * helper (RVM_PORTABLE_FLOAT16 selects it) gives the same bits. */
static inline uint16_t rvm_to_float16(float f) {
  const _Float16 v = (_Float16)f;
  uint16_t h;
  memcpy(&h, &v, 2);
  return h;
}
#else
static inline uint16_t rvm_to_float16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
  if (ax < 0x38800000u) { /* below 2^-14: adding 0.5 rounds at the subnormal quantum */
    float a, r;
    uint32_t rb;
    memcpy(&a, &ax, 4);
    r = a + 0.5f;
    memcpy(&rb, &r, 4);
    return (uint16_t)(sign | (rb - 0x3f000000u));
  }
  const uint32_t odd = (ax >> 13) & 1u;
  return (uint16_t)(sign | ((ax + ((uint32_t)(15 - 127) << 23) + 0xfffu + odd) >> 13));
}
#endif

static inline uint16_t rvm_to_float16_d(double d) { /* float64 -> float16 directly */
  if (!(fabs(d) < 65520.0)) return rvm_to_float16((float)d); /* NaN, infinities, overflow */
  const uint32_t sign = signbit(d) ? 0x8000u : 0u;
  const double a = fabs(d);
  if (a == 0.0) return (uint16_t)sign;
  int k;
  frexp(a, &k);
  const int e = k - 1;
  const int q = (int)nearbyint(ldexp(a, -((e < -14 ? -14 : e) - 10)));
  return (uint16_t)(sign | (uint32_t)(e < -14 ? q : ((e + 15) << 10) + q - 1024));
}

static inline float rvm_load_bfloat16(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float out;
  memcpy(&out, &bits, 4);
  return out;
}

static inline uint16_t rvm_to_bfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
"""


def render_narrow_helpers():
    """The C helpers of every narrow type: ``rvm_load_<dtype>`` (storage -> computation
    type) and ``rvm_to_<dtype>`` (computation type -> storage, rounding or wrapping)."""
    lines = [_GENERIC]
    for name, (ebits, mbits, bias, kind) in FLOAT_FORMATS.items():
        if name in ("float16", "bfloat16"):
            continue
        args = f"{ebits}, {mbits}, {bias}, {_KINDS[kind]}"
        lines.append(f"static inline float rvm_load_{name}(uint8_t v) "
                     f"{{ return rvm_narrow_decode(v, {args}); }}")
        lines.append(f"static inline uint8_t rvm_to_{name}(float x) "
                     f"{{ return (uint8_t)rvm_narrow_encode(x, {args}); }}")
    lines.append("/* float -> integer toward zero; NaN, infinities and out-of-range give 0 */")
    lines.append("static inline int64_t rvm_trunc_i64(double x) "
                 "{ return fabs(x) < 9.2e18 ? (int64_t)x : 0; }")
    for name, ctype in _SUB_BYTE_INTS.items():
        bits = int(name[-1])
        mask = (1 << bits) - 1
        if name.startswith("u"):
            body = f"(uint8_t)((uint64_t)v & {mask}u)"
        else:
            half = 1 << (bits - 1)
            body = f"(int8_t)((int)(((uint64_t)v & {mask}u) ^ {half}u) - {half})"
        # wrap (casts) and load: the value of the low bits; store: the low bits alone
        lines.append(f"static inline {ctype} rvm_wrap_{name}(int64_t v) {{ return {body}; }}")
        lines.append(f"static inline {ctype} rvm_load_{name}(uint8_t v) "
                     f"{{ return rvm_wrap_{name}(v); }}")
        lines.append(f"static inline uint8_t rvm_to_{name}(int64_t v) "
                     f"{{ return (uint8_t)((uint64_t)v & {mask}u); }}")
    return "\n".join(lines) + "\n"


def is_narrow(dtype):
    """Whether ``dtype`` is stored in a C type other than the one it computes in."""
    return dtype.lanes == 1 and (dtype.is_narrow_float or str(dtype) in _SUB_BYTE_INTS)


def storage_ctype(dtype):
    """The C type a narrow ``dtype``'s elements are stored in."""
    if dtype.is_narrow_float:
        return "uint16_t" if dtype.bits == 16 else "uint8_t"
    return "uint8_t"


def compute_ctype(dtype):
    """The C type a narrow ``dtype``'s values are computed in."""
    return "float" if dtype.is_narrow_float else _SUB_BYTE_INTS[str(dtype)]


def load(dtype, text):
    """The C expression widening the stored element ``text`` of a narrow ``dtype``."""
    return f"rvm_load_{dtype}({text})"


def store(dtype, text):
    """The C expression narrowing the computed value ``text`` for storage."""
    if dtype.is_narrow_float:
        return f"rvm_to_{dtype}({text})"
    return f"rvm_to_{dtype}((int64_t)({text}))"


def cast(dtype, source, text):
    """The C expression of ``text`` (of dtype ``source``) cast to the narrow ``dtype``, in
    ``dtype``'s computation type: rounded to ``dtype``'s values, or wrapped to its width."""
    if dtype.is_narrow_float:
        if dtype == "float16" and source == "float64":
            return f"rvm_load_float16(rvm_to_float16_d({text}))"
        return f"rvm_load_{dtype}(rvm_to_{dtype}((float)({text})))"
    if source.is_float:
        return f"rvm_wrap_{dtype}(rvm_trunc_i64((double)({text})))"
    return f"rvm_wrap_{dtype}((int64_t)({text}))"


def round_constant(dtype, value):
    """The float ``value`` rounded to the narrow float ``dtype`` (as the C helpers round)."""
    import numpy as np

    wide = np.float64(value) if dtype == "float16" else np.float32(value)
    return float(np.asarray(wide).astype(dtype.numpy_dtype).astype(np.float32))
