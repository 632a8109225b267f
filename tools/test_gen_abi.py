#!/usr/bin/env python3
"""Checks of tools/gen_abi.py that a malformed spec/abi.toml is refused with a message that names
the problem, and that the SystemVerilog package carries the packet table the RTL decodes with."""
import copy
import os
import sys
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_abi  # noqa: E402

SPEC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec", "abi.toml")


def load():
    with open(SPEC, "rb") as f:
        return tomllib.load(f)


def packet(spec, name):
    return next(p for p in spec["packet"] if p["name"] == name)


class GenAbiChecks(unittest.TestCase):
    def refused(self, spec, *words):
        with self.assertRaises(SystemExit) as e:
            gen_abi.check(spec)
        for w in words:
            self.assertIn(w, str(e.exception))

    def test_the_spec_passes(self):
        gen_abi.check(load())

    def test_a_packet_needs_a_class(self):
        spec = load()
        del packet(spec, "FILL")["class"]
        self.refused(spec, "FILL", "class")

    def test_packets_of_one_class_share_their_payload_layout(self):
        spec = load()
        p = packet(spec, "READ_PHYSICAL")
        p["payload"] = list(reversed(p["payload"]))
        self.refused(spec, "READ_PHYSICAL", "copy", "COPY")

    def test_packets_of_one_class_share_their_flags(self):
        spec = load()
        packet(spec, "WRITE_PHYSICAL")["flags"] = [{"name": "x", "bit": 0, "desc": "x"}]
        self.refused(spec, "WRITE_PHYSICAL", "write", "WRITE_DATA")

    def test_fetch_error_codes_are_unique_and_start_with_ok(self):
        spec = load()
        spec["fetch_error"][2]["code"] = spec["fetch_error"][1]["code"]
        self.refused(spec, "fetch error")
        spec = load()
        spec["fetch_error"] = spec["fetch_error"][1:]
        self.refused(spec, "fetch error")

    def test_the_sv_package_has_a_table_row_and_payload_struct_per_packet(self):
        spec = load()
        sv = gen_abi.gen_sv(spec)
        for p in spec["packet"]:
            op = "Op" + gen_abi.camel(p["name"])
            self.assertIn(f"      {op}: info = '{{known: 1'b1, min_dwords: 16'd{p['min_dwords']},", sv)
            self.assertIn(f"pkt_class: PktClass{gen_abi.camel(p['class'])}}};", sv)
            if p["payload"]:
                self.assertIn(f"}} pld_{p['name'].lower()}_t;", sv)
        # A field named like a keyword gets a suffix (WAIT_MEM's `ref`).
        self.assertIn("logic [31:0] ref_value;", sv)

    def test_the_cpp_packet_table_names_payload_variable_part_flags_and_values(self):
        spec = load()
        cpp = gen_abi.gen_cpp(spec)
        for p in spec["packet"]:
            c = gen_abi.camel(p["name"])
            if p["payload"]:
                names = ", ".join(f'"{f["name"]}"' for f in p["payload"])
                self.assertIn(f"inline constexpr std::string_view k{c}Payload[] = {{{names}}};", cpp)
                self.assertIn(f"{{packet_tables::k{c}Payload, {len(p['payload'])}}}", cpp)
            self.assertIn(f'"{p.get("variable", {}).get("name", "")}", ', cpp)
            for fl in p["flags"]:
                self.assertIn(f'{{"{fl["name"]}", {fl["bit"]}, {gen_abi.fwidth(fl)}, ', cpp)
                for v in fl.get("values", []):
                    self.assertIn(f'{{{v["value"]}, "{v["name"]}"}}', cpp)
        for fl in spec["ring_entry"]["flags"]:
            self.assertIn(f'{{1u << {fl["bit"]}, "{fl["name"]}"}}', cpp)


if __name__ == "__main__":
    unittest.main()
