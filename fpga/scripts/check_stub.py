#!/usr/bin/env python3
"""Compares the port list of a vendor IP's synthesis stub (written by Vivado) with the black box
the open checks use (fpga/stubs): same names, directions and widths, or a list of differences.

  check_stub.py --ip <vivado>_stub.v --ours fpga/stubs/<module>.sv
"""
import argparse
import re
import sys

DECL = re.compile(r"^\s*(input|output|inout)\s+(?:wire\s+)?(?:logic\s+)?(\[[^\]]+\])?\s*([A-Za-z_][\w]*)", re.M)


def ports(path):
    text = re.sub(r"//.*", "", open(path).read())
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for d, w, n in DECL.findall(text):
        out[n] = (d, (w or "").replace(" ", ""))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ip", required=True)
    ap.add_argument("--ours", required=True)
    a = ap.parse_args()
    ip, ours = ports(a.ip), ports(a.ours)
    diff = [f"{n}: only in the IP" for n in sorted(ip.keys() - ours.keys())]
    diff += [f"{n}: only in {a.ours}" for n in sorted(ours.keys() - ip.keys())]
    diff += [f"{n}: IP {ip[n]}, ours {ours[n]}" for n in sorted(ip.keys() & ours.keys()) if ip[n] != ours[n]]
    if diff:
        sys.exit(f"the IP's ports differ from {a.ours} (update the stub and the board top):\n  " + "\n  ".join(diff))
    print(f"check_stub: {len(ip)} ports of {a.ip} match {a.ours}")


if __name__ == "__main__":
    main()
