#!/usr/bin/env python3
"""FuseSoC generator (GAPI 1.0): writes sgpu_litepcie_s7.v with gen_tlp_core.py and a .core file
naming it. FuseSoC runs this with its input YAML as the only argument, in the output folder."""
import os
import subprocess
import sys

import yaml


def main():
    with open(sys.argv[1]) as f:
        gapi = yaml.safe_load(f)
    p = gapi.get("parameters") or {}
    vlnv = gapi["vlnv"]
    out = "sgpu_litepcie_s7.v"
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "gen_tlp_core.py"), "--out", out,
                    "--data-width", str(p.get("data_width", 128)), "--tags", str(p.get("tags", 8)),
                    "--address-width", str(p.get("address_width", 64)),
                    "--bar0-size", str(p.get("bar0_size", 4096))], check=True)
    # The lint waivers for the generated file travel with it.
    with open(os.path.join(here, "litepcie.vlt")) as src, open("litepcie.vlt", "w") as dst:
        dst.write(src.read())
    core = {
        "name": vlnv,
        "filesets": {"rtl": {"files": [{"litepcie.vlt": {"file_type": "vlt"}}, {out: {"file_type": "verilogSource"}}]}},
        "targets": {"default": {"filesets": ["rtl"]}},
    }
    with open(vlnv.split(":")[2] + ".core", "w") as f:
        f.write("CAPI=2:\n")
        yaml.safe_dump(core, f)


if __name__ == "__main__":
    main()
