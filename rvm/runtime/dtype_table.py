"""The element types rvm knows, as plain data: names, DLPack (code, bits) and the narrow
float formats. Written once here; ``rvm.runtime.data_type`` builds DataType on it and the
native build generates the C runtime's dtype names from it (this file imports nothing, so
the build loads it by path).
"""

# DLPack type codes (DLPack 1.1 numbers the float8/float4 formats from 7).
DL_INT, DL_UINT, DL_FLOAT, DL_HANDLE, DL_BFLOAT, DL_BOOL = 0, 1, 2, 3, 4, 6
DL_FLOAT8_E4M3FN, DL_FLOAT8_E4M3FNUZ, DL_FLOAT8_E5M2, DL_FLOAT8_E5M2FNUZ = 10, 11, 12, 13
DL_FLOAT8_E8M0FNU, DL_FLOAT4_E2M1FN = 14, 17
FLOAT_CODES = frozenset((DL_FLOAT, DL_BFLOAT, DL_FLOAT8_E4M3FN, DL_FLOAT8_E4M3FNUZ,
                         DL_FLOAT8_E5M2, DL_FLOAT8_E5M2FNUZ, DL_FLOAT8_E8M0FNU,
                         DL_FLOAT4_E2M1FN))

#: The float formats narrower than float32: name -> (exponent bits, mantissa bits, exponent
#: bias, kind). Kinds: "ieee" (infinities; NaN: exponent all ones and a mantissa),
#: "fn" (no infinity; NaN: every bit but the sign set; overflow gives NaN), "fnuz" (no
#: infinity, no negative zero; NaN: the sign bit alone; overflow gives NaN), "sat" (no
#: infinity or NaN; overflow saturates, NaN gives -0, as ml_dtypes converts), "e8m0"
#: (unsigned powers of two 2**(e - 127); NaN: all ones; no zero).
FLOAT_FORMATS = {
    "float16": (5, 10, 15, "ieee"),
    "bfloat16": (8, 7, 127, "ieee"),
    "float8_e4m3fn": (4, 3, 7, "fn"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
    "float8_e8m0fnu": (8, 0, 127, "e8m0"),
    "float4_e2m1fn": (2, 1, 1, "sat"),
}
#: Element types whose numpy dtype comes from ml_dtypes.
ML_DTYPES = frozenset(("bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                       "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4",
                       "int2", "uint2"))

BASE_TYPES = {
    "bool": (DL_BOOL, 8),
    "int8": (DL_INT, 8),
    "int16": (DL_INT, 16),
    "int32": (DL_INT, 32),
    "int64": (DL_INT, 64),
    "uint8": (DL_UINT, 8),
    "uint16": (DL_UINT, 16),
    "uint32": (DL_UINT, 32),
    "uint64": (DL_UINT, 64),
    "float16": (DL_FLOAT, 16),
    "float32": (DL_FLOAT, 32),
    "float64": (DL_FLOAT, 64),
    "bfloat16": (DL_BFLOAT, 16),
    "float8_e4m3fn": (DL_FLOAT8_E4M3FN, 8),
    "float8_e4m3fnuz": (DL_FLOAT8_E4M3FNUZ, 8),
    "float8_e5m2": (DL_FLOAT8_E5M2, 8),
    "float8_e5m2fnuz": (DL_FLOAT8_E5M2FNUZ, 8),
    "float8_e8m0fnu": (DL_FLOAT8_E8M0FNU, 8),
    "float4_e2m1fn": (DL_FLOAT4_E2M1FN, 4),
    "int4": (DL_INT, 4),
    "uint4": (DL_UINT, 4),
    "int2": (DL_INT, 2),
    "uint2": (DL_UINT, 2),
    "handle": (DL_HANDLE, 64),
}
