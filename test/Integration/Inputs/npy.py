#!/usr/bin/env python3
"""Writes and reads little-endian float32 .npy files without numpy.

As a tool it writes the inputs of the fp8-run tests, so that their amax and
every element are known to the checkers (check_json.py reads them back):

    npy.py OUT --shape 16x32 --normal SEED STD [--set INDEX=VALUE ...]

--normal draws N(0, STD^2) from Python's random.Random(SEED), rounded to f32;
--outlier-channels COUNT FACTOR then multiplies COUNT columns (indices of
the last dimension, drawn from the same generator) by FACTOR, as LLM
activations carry a few outlier channels; --set-row ROW=VALUE (or
FIRST-LAST=VALUE) fills rows (indices over the leading dimensions); --set overwrites single elements
(row-major index; VALUE may be nan, inf, -inf or a number); --int64
writes '<i8' integers instead of '<f4'.
"""
import argparse
import ast
import random
import struct


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write(path, shape, values, int64=False):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        "<i8" if int64 else "<f4", "".join("%d," % d for d in shape))
    # Magic, version 1.0, header length; the header pads to 64 bytes with \n.
    total = 10 + len(header) + 1
    header += " " * (-total % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), "q" if int64 else "f"),
                            *values))


def read(path):
    """(shape, values) of a '<f4' C-order .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x93NUMPY"):
        raise ValueError("%s is not a .npy file" % path)
    if data[6] == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError("%s: only C-order <f4 is supported" % path)
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    body = data[start + length:start + length + 4 * count]
    return shape, list(struct.unpack("<%df" % count, body))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--shape", required=True,
                        help="dimensions separated by x, e.g. 16x32; "
                        "'scalar' for a rank-0 array")
    parser.add_argument("--normal", nargs=2, metavar=("SEED", "STD"),
                        required=True)
    parser.add_argument("--outlier-channels", nargs=2,
                        metavar=("COUNT", "FACTOR"))
    parser.add_argument("--set-row", action="append", default=[],
                        metavar="ROW=VALUE")
    parser.add_argument("--set", action="append", default=[],
                        metavar="INDEX=VALUE")
    parser.add_argument("--int64", action="store_true",
                        help="write '<i8' (the values truncated; --set "
                        "values exact)")
    args = parser.parse_args()
    shape = ([] if args.shape == "scalar"
             else [int(d) for d in args.shape.split("x")])
    count = 1
    for d in shape:
        count *= d
    rng = random.Random(int(args.normal[0]))
    std = float(args.normal[1])
    values = [f32(rng.gauss(0.0, std)) for _ in range(count)]
    columns = shape[-1] if shape else 1
    if args.outlier_channels:
        factor = float(args.outlier_channels[1])
        for column in rng.sample(range(columns),
                                 int(args.outlier_channels[0])):
            for i in range(column, count, columns):
                values[i] = f32(values[i] * factor)
    for item in args.set_row:
        rows, value = item.split("=")
        first, _, last = rows.partition("-")
        for row in range(int(first), int(last or first) + 1):
            start = row * columns
            values[start:start + columns] = [float(value)] * columns
    if args.int64:
        values = [int(v) for v in values]
    for item in args.set:
        index, value = item.split("=")
        values[int(index)] = int(value) if args.int64 else float(value)
    write(args.out, shape, values, args.int64)


if __name__ == "__main__":
    main()
