#!/usr/bin/env python3
"""Regenerates every file derived from spec/ (registers and device ABI) for RTL, host and docs.

  gen.py            write the generated files into the tree
  gen.py --check    regenerate into a scratch folder and fail if the tree differs

PeakRDL runs from the virtual environment that `make deps` creates (--peakrdl PATH).
"""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RDL = "spec/registers.rdl"
ABI = "spec/abi.toml"

# Every generated file, relative to the repository root.
OUTPUTS = [
    "rtl/gen/sgpu_regs.sv",
    "rtl/gen/sgpu_regs_pkg.sv",
    "host/abi/include/sgpu/gen/sgpu_regs.h",
    "host/abi/include/sgpu/gen/sgpu_reg_enums.hpp",
    "host/src/gen/reg_table.cpp",
    "docs/reference/registers.md",
    "rtl/gen/sgpu_reg_map_pkg.sv",
    "rtl/gen/sgpu_abi_pkg.sv",
    "host/abi/include/sgpu/gen/abi.hpp",
    "docs/reference/abi.md",
]


def run(cmd):
    subprocess.run(cmd, check=True, cwd=ROOT)


def generate(peakrdl, out_root):
    p = lambda rel: os.path.join(out_root, rel)
    for rel in OUTPUTS:
        os.makedirs(os.path.dirname(p(rel)), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # --rt-read-fanin registers the read data per 128-byte window of the map (and the read's
        # error): the readback OR of every register is a cycle of its own, a register read takes
        # one more cycle (docs/fpga.md, timing pass 4b; docs/programming-guide.md). The AXI4-Lite
        # side is rtl/top/sgpu_regs_axil.sv on the passthrough interface, which offers each
        # request from registers (timing pass 14).
        run([peakrdl, "regblock", RDL, "-o", tmp, "--cpuif", "passthrough", "--default-reset", "arst_n",
             "--addr-width", "12", "--err-if-bad-addr", "--rt-read-fanin"])
        for name in ("sgpu_regs.sv", "sgpu_regs_pkg.sv"):
            os.replace(os.path.join(tmp, name), p("rtl/gen/" + name))
    run([peakrdl, "c-header", RDL, "-o", p("host/abi/include/sgpu/gen/sgpu_regs.h")])
    run([peakrdl, "cpp-enums", "--peakrdl-cfg", "tools/peakrdl.toml", RDL,
         "-o", p("host/abi/include/sgpu/gen/sgpu_reg_enums.hpp")])
    run([sys.executable, "tools/gen_reg_table.py", p("host/abi/include/sgpu/gen/sgpu_regs.h"),
         "--out", p("host/src/gen/reg_table.cpp")])
    run([sys.executable, "tools/gen_reg_map.py", p("host/abi/include/sgpu/gen/sgpu_regs.h"),
         "--out", p("rtl/gen/sgpu_reg_map_pkg.sv")])
    run([peakrdl, "markdown", RDL, "-o", p("docs/reference/registers.md")])
    run([sys.executable, "tools/gen_abi.py", ABI, "--sv", p("rtl/gen/sgpu_abi_pkg.sv"),
         "--cpp", p("host/abi/include/sgpu/gen/abi.hpp"), "--md", p("docs/reference/abi.md")])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--peakrdl", default="peakrdl")
    a = ap.parse_args()
    if not a.check:
        generate(a.peakrdl, ROOT)
        return
    with tempfile.TemporaryDirectory() as scratch:
        generate(a.peakrdl, scratch)
        stale = [rel for rel in OUTPUTS
                 if not os.path.exists(os.path.join(ROOT, rel))
                 or not filecmp.cmp(os.path.join(ROOT, rel), os.path.join(scratch, rel), shallow=False)]
    if stale:
        print("generated files are out of date with spec/ (run `make gen`):", *stale, sep="\n  ")
        sys.exit(1)
    print(f"generated files up to date ({len(OUTPUTS)} files)")


if __name__ == "__main__":
    main()
