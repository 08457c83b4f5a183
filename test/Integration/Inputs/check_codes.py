#!/usr/bin/env python3
"""Checker of fp8-unscaled-cast.mlir: reads the two code arrays the run
printed (printMemrefI32), recomputes both from fp8_reference.py (the values
-0.02 .. 0.03 in steps of 1/20000, cast with scale 1 and with the delayed
scale of their amax 0.03), fails on any difference, and prints how many
distinct E4M3 codes each cast uses."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8_reference as ref  # noqa: E402


def main():
    text = open(sys.argv[1]).read()
    arrays = [[int(v) for v in body.split(",")]
              for body in re.findall(r"^\[([-0-9, ]+)\]", text, re.M)]
    if len(arrays) != 2:
        sys.exit("expected 2 printed arrays, found %d" % len(arrays))
    values = [ref.f32((i - 400) / 20000.0) for i in range(1001)]
    amax = max(abs(v) for v in values)
    scale = ref.delayed_scale(amax, 1.0, 448.0)
    expected = [ref.quantize(values, 1.0, "E4M3FN"),
                ref.quantize(values, scale, "E4M3FN")]
    for name, got, want in zip(["unscaled", "scaled"], arrays, expected):
        if got != want:
            bad = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
            sys.exit("%s: code of x[%d] = %r is %d, expected %d" %
                     (name, bad, values[bad], got[bad], want[bad]))
    print("amax %.9g scale %.9g" % (amax, scale))
    for name, codes in zip(["unscaled", "scaled"], arrays):
        decoded = sorted(set(float(ref.decode(c, "E4M3FN")) for c in codes))
        print("%s: %d values -> %d distinct codes, %g .. %g" %
              (name, len(codes), len(set(codes)), decoded[0], decoded[-1]))


if __name__ == "__main__":
    main()
