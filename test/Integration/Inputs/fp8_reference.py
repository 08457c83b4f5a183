#!/usr/bin/env python3
"""Independent reference for test/Integration/fp8-lower-to-cpu.mlir.

Derives the expected FP8 codes, scales and GEMM results from the format
definitions (OCP FP8: every finite value enumerated exactly as a Fraction),
Transformer Engine's scaling formulas and an exact GEMM, without any code of
the project. f32 roundings use the host's IEEE double followed by struct's
f32 packing (exact for one product or quotient of two f32 values).
"""
import math
import struct
from fractions import Fraction

FORMATS = {
    # name: (exponent bits, mantissa bits, bias, has_inf)
    "E4M3FN": (4, 3, 7, False),
    "E5M2": (5, 2, 15, True),
}


def f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # beyond f32's range after rounding
        return math.copysign(math.inf, x)


def f32_bits(x):
    return struct.unpack("<i", struct.pack("<f", x))[0]


def finite_codes(fmt):
    """(value, code) for every finite non-negative FP8 value."""
    e_bits, m_bits, bias, has_inf = FORMATS[fmt]
    out = []
    for code in range(0x80):
        e, m = code >> m_bits, code & ((1 << m_bits) - 1)
        if has_inf and e == (1 << e_bits) - 1:
            continue  # Inf and NaN
        if not has_inf and code == 0x7F:
            continue  # E4M3FN's only NaN
        if e == 0:
            v = Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
        else:
            v = (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)
        out.append((v, code))
    return out


def satfinite(x, fmt):
    """cvt.rn.satfinite: nearest even, +-Inf and overflow to +-max, NaN 0x7F."""
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    table = finite_codes(fmt)
    if math.isinf(x):
        return sign | table[-1][1]
    a = abs(Fraction(x))
    if a >= table[-1][0]:
        return sign | table[-1][1]
    for (lo, lc), (hi, hc) in zip(table, table[1:]):
        if lo <= a <= hi:
            if a - lo < hi - a:
                return sign | lc
            if hi - a < a - lo:
                return sign | hc
            return sign | (lc if lc % 2 == 0 else hc)
    raise AssertionError


def decode(code, fmt):
    sign = -1 if code & 0x80 else 1
    for v, c in finite_codes(fmt):
        if c == code & 0x7F:
            return sign * v
    raise ValueError(code)


def quantize(values, scale, fmt):
    return [satfinite(f32(f32(v) * f32(scale)), fmt) for v in values]


def delayed_scale(amax, prev, fmt_max, margin=0, pow2=False):
    s = prev
    if math.isfinite(amax) and amax > 0:
        s = f32(f32(fmt_max * 2.0 ** -margin) / amax)
    if math.isinf(s):
        s = f32(3.4028234663852886e38)
    if pow2:
        s = struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", s))[0] & 0xFF800000))[0]
    return s


def current_scale(amax, fmt_max, eps=0.0):
    if amax < eps:
        amax = eps
    if math.isinf(amax) or math.isnan(amax) or amax == 0:
        return 1.0
    s = f32(fmt_max / amax)
    return f32(3.4028234663852886e38) if math.isinf(s) else s


if __name__ == "__main__":
    inf, nan = float("inf"), float("nan")
    print("quantize E4M3", quantize(
        [464.0, 465.0, 1000.0, -inf, inf, nan, -nan, 2.0**-9, 2.0**-10,
         3 * 2.0**-11, 0.0, -0.0, 448.0, 17.0, -465.0, 0.3], 1.0, "E4M3FN"))
    print("quantize E5M2", quantize(
        [57344.0, 59392.0, 61440.0, 1e6, -inf, nan, 2.0**-16, 2.0**-17,
         3 * 2.0**-17, 0.1], 1.0, "E5M2"))
    for amax in [0.03, 1000.0, 0.05, 1200.0]:
        s = delayed_scale(f32(amax), 1.0, 448.0)
        print("scale E4M3 amax", amax, s, f32_bits(s))
    s = delayed_scale(f32(0.03), 1.0, 57344.0)
    print("scale E5M2 amax 0.03", s, f32_bits(s))
    s = delayed_scale(f32(0.03), 1.0, 448.0, margin=1)
    print("margin 1", s, f32_bits(s))
    s = delayed_scale(f32(0.03), 1.0, 448.0, pow2=True)
    print("pow2", s, f32_bits(s))
    for amax in [0.0, inf, nan]:
        print("delayed guard", amax, delayed_scale(amax, 2.5, 448.0),
              "current guard", current_scale(amax, 448.0))
    s = current_scale(f32(1e-45), 448.0)
    print("current tiny", s, f32_bits(s))
    s = current_scale(0.0, 448.0, eps=f32(1e-3))
    print("current eps", s, f32_bits(s))
    s = delayed_scale(3.0, 1.0, 448.0)
    print("history max", s, f32_bits(s))
    s = delayed_scale(0.5, 1.0, 448.0)
    print("history most_recent", s, f32_bits(s))
    # Seeds' vectors quantized with their own scale.
    for amax, vec in [(0.03, [0.03, -0.02, 0.001]), (1000.0, [1000.0, -1000.0, 1.0])]:
        s = delayed_scale(f32(amax), 1.0, 448.0)
        print("seed", amax, quantize(vec, s, "E4M3FN"))
    # GEMM: lhs E4M3 [2x3], rhs E5M2 [N=2 x K=3] (transpose_rhs), bias.
    A = [[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]
    B = [[2.0, 1.0, -4.0], [0.5, -0.75, 1.0]]
    bias = [0.125, -1.0]
    sa, sb = 0.5, 0.25
    qa = [[decode(satfinite(v, "E4M3FN"), "E4M3FN") for v in r] for r in A]
    qb = [[decode(satfinite(v, "E5M2"), "E5M2") for v in r] for r in B]
    D = [[float(sum(Fraction(qa[m][k]) * Fraction(qb[n][k]) for k in range(3))
                * Fraction(sa) * Fraction(sb) + Fraction(bias[n]))
          for n in range(2)] for m in range(2)]
    print("gemm", D, "amax", max(abs(v) for r in D for v in r))
