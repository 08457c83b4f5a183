#!/usr/bin/env python3
"""Writes the PTX of every gpu.binary in an MLIR file to <prefix>.<name>.ptx.

usage: extract-ptx.py in.mlir out_prefix [--ptxas PTXAS ARCH]

The input is the output of `fp8-opt --fp8-lower-to-nvvm` (format=isa, the
default): each `gpu.binary @name [#gpu.object<..., assembly = "...">]` holds
the PTX as an MLIR string with \\XX hex escapes. Prints the written paths;
exits 1 when there is no PTX. With --ptxas, also assembles each file for
ARCH and exits 1 when ptxas fails or prints anything (a warning, a C75xx
advisory).
"""
import re
import subprocess
import sys


def main():
    ptxas = None
    if len(sys.argv) == 6 and sys.argv[3] == "--ptxas":
        ptxas, arch = sys.argv[4], sys.argv[5]
    elif len(sys.argv) != 3:
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    found = 0
    pattern = r'gpu\.binary @(\w+).*?assembly = "((?:[^"\\]|\\.)*)"'
    for match in re.finditer(pattern, text, re.S):
        name, body = match.group(1), match.group(2)
        ptx = re.sub(r'\\([0-9A-Fa-f]{2})',
                     lambda h: chr(int(h.group(1), 16)), body)
        ptx = ptx.replace('\\\\', '\\')
        path = f"{sys.argv[2]}.{name}.ptx"
        with open(path, "w") as out:
            out.write(ptx)
        print(path)
        found += 1
        if ptxas:
            run = subprocess.run([ptxas, f"-arch={arch}", path, "-o",
                                  path + ".cubin"], capture_output=True,
                                 text=True)
            if run.returncode != 0 or run.stdout or run.stderr:
                sys.exit(f"ptxas on {path}:\n{run.stdout}{run.stderr}")
    if not found:
        sys.exit(f"{sys.argv[1]}: no gpu.binary with PTX (format=isa)")


if __name__ == "__main__":
    main()
