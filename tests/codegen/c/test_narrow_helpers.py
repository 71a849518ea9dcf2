"""The float16 helpers of the C preamble give numpy's bits on both of their paths: the
compiler's ``_Float16`` rounding (used where the compiler has it) and the portable one
(``RVM_PORTABLE_FLOAT16``), and the branch-free widening of every float16 value."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from rvm.codegen.c.narrow import render_narrow_helpers

_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
%s
int main(void) {
  uint32_t bits;
  float value;
  while (fread(&bits, 4, 1, stdin) == 1) {
    memcpy(&value, &bits, 4);
    const uint16_t half = rvm_to_float16(value);
    const float wide = rvm_load_float16((uint16_t)(bits & 0xffffu));
    fwrite(&half, 2, 1, stdout);
    fwrite(&wide, 4, 1, stdout);
  }
  return 0;
}
"""


def _compiler():
    cc = shutil.which(os.environ.get("RVM_CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def _probes():
    """float32 values around every float16 rounding boundary, and random bit patterns; the
    low 16 bits of the first 65536 run over every float16 value."""
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = np.unique(halves[np.isfinite(halves)].astype(np.float32))
    mids = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(np.float32)
    near = [np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    every = np.arange(1 << 16, dtype=np.uint32).view(np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 65504, 65519.99, 65520, 1e-8, -1e-8, 3e38],
                       np.float32)
    noise = np.random.default_rng(0).integers(0, 1 << 32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    return np.concatenate([every, special, mids, *near, noise]).astype(np.float32)


@pytest.mark.parametrize("portable", [False, True])
def test_float16_helpers_match_numpy(tmp_path, portable):
    source = tmp_path / "helpers.c"
    source.write_text(_MAIN % render_narrow_helpers())
    binary = tmp_path / "helpers"
    flags = ["-DRVM_PORTABLE_FLOAT16"] if portable else []
    subprocess.run([_compiler(), "-O2", "-march=native", "-std=gnu11", *flags, str(source),
                    "-o", str(binary), "-lm"], check=True, capture_output=True)
    probes = _probes()
    out = subprocess.run([str(binary)], input=probes.tobytes(), check=True,
                         capture_output=True).stdout
    record = np.dtype([("half", "<u2"), ("wide", "<f4")])
    got = np.frombuffer(out, record)
    assert got.size == probes.size
    with np.errstate(over="ignore"):
        want_half = probes.astype(np.float16)
    nan = np.isnan(want_half)
    np.testing.assert_array_equal(np.isnan(got["half"].view(np.float16)), nan)
    np.testing.assert_array_equal(got["half"][~nan], want_half.view(np.uint16)[~nan])
    halves = (probes.view(np.uint32) & 0xFFFF).astype(np.uint16).view(np.float16)
    want_wide = halves.astype(np.float32)
    nan = np.isnan(want_wide)
    np.testing.assert_array_equal(np.isnan(got["wide"]), nan)
    np.testing.assert_array_equal(got["wide"].view(np.uint32)[~nan],
                                  want_wide.view(np.uint32)[~nan])
