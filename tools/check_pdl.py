#!/usr/bin/env python3
"""Checks that every kernel launched with programmatic dependent launch
waits for the kernel before it (core/cuda.h: KR_LAUNCH_PDL, LAUNCH_PDL
and RED_LAUNCH launch with the attribute, and such a kernel must call
kr_pdl_begin or kr_pdl_wait before it touches an earlier kernel's
output). A launch of a kernel whose body names neither would race with
its predecessor, silently; CI runs this on every .cu file.

  tools/check_pdl.py [ROOT]      exit 0: all good; 1: a kernel lacks it
"""
import glob
import os
import re
import sys

LAUNCHES = [
    re.compile(r"\bKR_LAUNCH_PDL\(\s*ctx\s*,[^,]+,[^,]+,\s*([A-Za-z_]\w*)"),
    re.compile(r"\bLAUNCH_PDL\(\s*ctx\s*,[^,]+,\s*([A-Za-z_]\w*)"),
    re.compile(r"\bRED_LAUNCH\(\s*ctx\s*,\s*([A-Za-z_]\w*)"),
]
WAITS = ("kr_pdl_begin", "kr_pdl_wait")


def kernel_body(src, name):
    """The body of __global__ kernel `name` (templates included), or None."""
    pat = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?"
                     + re.escape(name) + r"\s*\(")
    m = pat.search(src)
    if not m:
        return None
    i = src.index("{", m.end())
    depth = 0
    for j in range(i, len(src)):
        if src[j] == "{":
            depth += 1
        elif src[j] == "}":
            depth -= 1
            if depth == 0:
                return src[i:j + 1]
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = checked = 0
    for path in sorted(glob.glob(os.path.join(root, "**", "*.cu"),
                                 recursive=True)):
        if "/build" in path:
            continue
        src = open(path).read()
        # launch sites outside the macros' own definitions
        code = re.sub(r"^[ \t]*#[ \t]*define(?:.*\\\n)*.*$", "", src,
                      flags=re.M)
        names = set()
        for pat in LAUNCHES:
            names.update(pat.findall(code))
        for name in sorted(names):
            body = kernel_body(src, name)
            checked += 1
            if body is None:
                print("%s: %s is launched with PDL but its definition is "
                      "not in this file" % (path, name))
                bad += 1
            elif not any(w in body for w in WAITS):
                print("%s: %s is launched with PDL but never calls "
                      "kr_pdl_begin or kr_pdl_wait" % (path, name))
                bad += 1
    print("check_pdl: %d kernels launched with PDL, %d without the wait"
          % (checked, bad))
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
