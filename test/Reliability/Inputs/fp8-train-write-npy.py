"""Writes a little-endian f4 .npy file of the given shape, every element 0.5
(no numpy needed): python fp8-train-write-npy.py FILE DIM...."""
import struct
import sys

path, shape = sys.argv[1], [int(d) for d in sys.argv[2:]]
count = 1
for d in shape:
    count *= d
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
    "%d," % d for d in shape)
header += " " * (-(10 + len(header) + 1) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode() + struct.pack("<f", 0.5) * count)
