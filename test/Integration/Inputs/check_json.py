#!/usr/bin/env python3
"""Asserts numbers in an fp8-run or fp8-train --json report.

    check_json.py REPORT 'PATH OP EXPR' ...

A report that does not start with its JSON object (fp8-train prints its
table first) is read from its last line that starts with '{'.

PATH walks the report: keys and list indices separated by dots, and
[key=value] for the list element whose key is value, e.g.
steps.1.quantized[tensor=fp8.gemm.arg0].next_scale. A null `<name>_db` (an
SQNR) reads as its `<name>` sibling says: inf (exact), -inf (broken_output)
or nan (not_comparable: the reference has non-finite elements).
OP is one of >= > <= < == != and ~= (equal within a relative 1e-6; lists
element-wise).
EXPR is the expectation, a Python expression computed independently of the
code under test, with these helpers (npy.py reads the files):
    f32(x)            x rounded to IEEE single precision
    npy(path)         the elements of a float32 .npy file
    amax(path)        max |x| over its non-NaN elements
    saturated(path, scale, factor=1, overflow=464)
                      the fraction of elements with
                      |f32(f32(x * factor) * scale)| > overflow, i.e. what
                      a cast with `scale` clips after --spike-factor (E4M3:
                      above 464 a non-saturating cast overflows; 448 < |v|
                      <= 464 rounds to 448)
    report(path, key)  the value at `key` (a PATH) in another report
    flushed(path, scale, min_subnormal=2**-9)
                      the fraction of non-zero elements whose scaled value
                      rounds to 0: |f32(x * scale)| <= min_subnormal / 2
                      (the tie goes to the even code, 0); E4M3 by default
Prints every assertion with the value found; exits 1 if any fails.
"""
import math
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npy  # noqa: E402

f32 = npy.f32


def load(path):
    return npy.read(path)[1]


def amax(path):
    return max(abs(v) for v in load(path) if not math.isnan(v))


def saturated(path, scale, factor=1.0, overflow=464.0):
    values = load(path)
    hits = sum(1 for v in values
               if abs(f32(f32(v * factor) * scale)) > overflow)
    return hits / len(values)


def flushed(path, scale, min_subnormal=2.0**-9):
    values = load(path)
    hits = sum(1 for v in values
               if v != 0 and abs(f32(v * scale)) <= min_subnormal / 2)
    return hits / len(values)


def read_report(path):
    with open(path) as f:
        text = f.read()
    if not text.lstrip().startswith("{"):
        text = text[text.rindex("\n{") + 1:]
    return json.loads(text, parse_constant=refuse_constant)


def refuse_constant(name):
    raise ValueError(f"the report writes {name}, which is not JSON")


def other_report(path, key):
    return walk(read_report(path), key)


HELPERS = {"f32": f32, "npy": load, "amax": amax, "saturated": saturated,
           "flushed": flushed, "report": other_report,
           "inf": math.inf, "nan": math.nan, "math": math}


NULL_SQNR = {"exact": math.inf, "broken_output": -math.inf,
             "not_comparable": math.nan}


def walk(report, path):
    value = parent = report
    token = ""
    for token in re.findall(r"\[[^\]]*\]|[^.\[]+", path):
        parent = value
        if token.startswith("["):
            key, wanted = token[1:-1].split("=", 1)
            matches = [v for v in value if str(v.get(key)) == wanted]
            if len(matches) != 1:
                raise KeyError("%s: %d elements with %s=%s" %
                               (path, len(matches), key, wanted))
            value = matches[0]
        elif isinstance(value, list):
            value = value[int(token)]
        else:
            value = value[token]
    if value is None and isinstance(parent, dict) and token.endswith("_db"):
        return NULL_SQNR[parent.get(token[:-len("_db")], "exact")]
    return value


def close(a, b):
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and
                len(a) == len(b) and all(close(x, y) for x, y in zip(a, b)))
    return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))


OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
       "<=": lambda a, b: a <= b, "<": lambda a, b: a < b,
       "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
       "~=": close}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    report = read_report(sys.argv[1])
    failed = False
    for assertion in sys.argv[2:]:
        match = re.match(r"\s*(\S+)\s*(>=|<=|==|!=|~=|>|<)\s*(.+)$", assertion)
        if not match:
            sys.exit("check_json.py: cannot parse '%s'" % assertion)
        path, op, expr = match.groups()
        actual = walk(report, path)
        expected = eval(expr, dict(HELPERS))
        ok = OPS[op](actual, expected)
        failed |= not ok
        print("%s: %s = %r %s %r" % ("ok" if ok else "FAILED", path, actual,
                                    op, expected))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
