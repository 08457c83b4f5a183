#!/usr/bin/env python3
"""Writes the signature file fp8-block-bench reads, from a function of an
MLIR module: `arg <type> <AxBxC>` per argument, `result <type> <shape>`.

usage: signature.py module.mlir function > block.sig

Only ranked tensors of bf16 or f32 with static shapes (what fp8-gen writes
for a fixed --seq and --batch); anything else is an error.
"""
import re
import sys


def tensor(text):
    match = re.fullmatch(r"tensor<((?:\d+x)*)(bf16|f32)>", text.strip())
    if not match:
        sys.exit(f"signature.py: '{text.strip()}' is not a static bf16/f32 tensor")
    return match.group(2), match.group(1).rstrip("x") or "1"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source = open(sys.argv[1]).read()
    head = re.search(r"func\.func @" + re.escape(sys.argv[2]) +
                     r"\((.*?)\)\s*->\s*(tensor<[^>]*>)", source, re.S)
    if not head:
        sys.exit(f"signature.py: no function @{sys.argv[2]} with one tensor result")
    for arg in re.findall(r"%\w+:\s*(tensor<[^>]*>)", head.group(1)):
        print("arg %s %s" % tensor(arg))
    print("result %s %s" % tensor(head.group(2)))


if __name__ == "__main__":
    main()
