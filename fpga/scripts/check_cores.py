#!/usr/bin/env python3
"""Checks that a FuseSoC core file lists exactly the files CMake compiles for it, in the same
order (rtl/CMakeLists.txt is where the lists live; the .core files mirror them for FuseSoC
users and for the fpga flow).

  check_cores.py --core rtl/softgpu.core --expect <file> <file> ...
"""
import argparse
import os
import sys

import yaml


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--core", required=True)
    ap.add_argument("--expect", nargs="+", required=True)
    a = ap.parse_args()
    with open(a.core) as f:
        core = yaml.safe_load(f)
    base = os.path.dirname(os.path.abspath(a.core))
    listed = []
    for fs in core["filesets"].values():
        for entry in fs.get("files", []):
            name = next(iter(entry)) if isinstance(entry, dict) else entry
            if not name.endswith(".vlt"):
                listed.append(os.path.normpath(os.path.join(base, name)))
    expect = [os.path.normpath(os.path.abspath(p)) for p in a.expect]
    if listed != expect:
        missing = [p for p in expect if p not in listed]
        extra = [p for p in listed if p not in expect]
        sys.exit(f"{a.core} does not list what CMake compiles:\n  missing: {missing}\n  extra: {extra}\n"
                 f"  (same files in another order counts too)")
    print(f"check_cores: {os.path.basename(a.core)} lists the {len(listed)} files CMake compiles")


if __name__ == "__main__":
    main()
