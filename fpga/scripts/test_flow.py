#!/usr/bin/env python3
"""Tests of the board flow's commands that run without Vivado or hardware: the board list, the
messages that stop `bitstream`, `program` and `rescan` early, the Vivado settings written from
fpga/boards.toml, and the IP port-list check. Run by `make test` (ctest: fpga flow)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAILS = []


def run(cmd, env=None, **kw):
    e = dict(os.environ, **(env or {}))
    return subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True, **kw)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def main():
    py = sys.executable
    # The board list: at least two boards of two families, each with part, bridge, link, status.
    r = run(["make", "-s", "-C", "fpga", "boards"])
    check(r.returncode == 0, "make -C fpga boards succeeds")
    for word in ("acorn_cle215", "alveo_u50", "xc7a200tfbg484-3", "xcu50-fsvh2104-2-e", "LitePCIe", "XDMA",
                 "Gen2 x4", "Gen3 x8", "never run on hardware"):
        check(word in r.stdout, f"the board list names {word}")
    r = run([py, "fpga/scripts/boards.py", "check"])
    check(r.returncode == 0, "every board's files exist, two families: " + r.stdout.strip() + r.stderr.strip())

    # bitstream without Vivado: stops at once, says what is missing and for which part.
    path = "/usr/bin:/bin"
    t0 = time.monotonic()
    r = run(["make", "-s", "-C", "fpga", "BOARD=alveo_u50", "bitstream"], env={"PATH": path})
    check(r.returncode != 0 and "Vivado is missing" in r.stdout and "xcu50-fsvh2104-2-e" in r.stdout,
          "bitstream without Vivado stops and names Vivado and the part")
    check(time.monotonic() - t0 < 10, "... at once (before creating environments or generating cores)")
    r = run(["make", "-s", "-C", "fpga", "bitstream"], env={"PATH": path})
    check(r.returncode != 0 and "say which board" in r.stdout, "bitstream without BOARD asks for one")
    r = run(["make", "-s", "-C", "fpga", "BOARD=no_such_board", "bitstream"], env={"PATH": path})
    check(r.returncode != 0 and "no board 'no_such_board'" in r.stderr and "acorn_cle215" in r.stderr,
          "an unknown board is refused with the known ones")
    with tempfile.TemporaryDirectory() as tmp:
        r = run(["make", "-s", "-C", "fpga", "BOARD=litefury", f"BUILD={tmp}", "program"])
        check(r.returncode != 0 and "run 'make -C fpga BOARD=litefury bitstream' first" in r.stdout,
              "program without a bitstream says which command makes it")
    r = run(["make", "-s", "-C", "fpga", "rescan"])
    check(r.returncode != 0 and "BDF=" in r.stdout, "rescan without BDF asks for one")
    r = run(["fpga/scripts/rescan.sh", "0000:7f:1f.7"])
    check(r.returncode != 0 and ("no device" in r.stdout or "needs root" in r.stdout),
          "rescan of a device that is not there is refused")

    # program and flash with DRY_RUN=1 print the loader's command: the right tool, arguments
    # from boards.toml, the cable, the image. Without an image they stop and say so.
    with open(os.path.join(ROOT, "fpga", "boards.toml"), "rb") as f:
        db = tomllib.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        for name, b in db["boards"].items():
            out = os.path.join(tmp, "fpga", name)
            os.makedirs(out)
            r = run(["make", "-s", "-C", "fpga", f"BOARD={name}", f"BUILD={tmp}", "DRY_RUN=1", "flash"])
            check(r.returncode != 0 and "run the bitstream target first" in r.stdout,
                  f"{name}: flash without an image says which command makes it")
            for ext in ("bit", "bin", "mcs"):
                open(os.path.join(out, f"{name}.{ext}"), "w").close()
            open(os.path.join(out, "config.tcl"), "w").close()
            for what in ("program", "flash"):
                r = run(["make", "-s", "-C", "fpga", f"BOARD={name}", f"BUILD={tmp}", "DRY_RUN=1", what],
                        env={"PATH": "/usr/bin:/bin"})
                cmd = r.stdout.split()
                if b["family"] == "s7":
                    image = os.path.join(out, f"{name}.bit" if what == "program" else f"{name}.bin")
                    want = (["openFPGALoader"] + b["openfpgaloader"] + ["-c", b["default_cable"]]
                            + ([] if what == "program" else ["-f"]) + [image])
                else:
                    want = ["vivado", "-mode", "batch", "-nojournal", "-log", f"{what}.log", "-source",
                            os.path.join(ROOT, "fpga", "scripts", "..", "vivado", f"{what}.tcl"), "-tclargs",
                            os.path.join(out, "config.tcl"), out]
                check(r.returncode == 0 and cmd == want, f"{name}: {what} runs {' '.join(want)} (got: {r.stdout.strip()}"
                      f"{r.stderr.strip()})")
        r = run(["make", "-s", "-C", "fpga", "BOARD=litefury", f"BUILD={tmp}", "DRY_RUN=1", "CABLE=digilent_hs2",
                 "program"])
        check(r.stdout.split()[:5] == ["openFPGALoader", "--fpga-part", "xc7a100tfgg484", "-c", "digilent_hs2"],
              "CABLE= picks the cable")
        r = run(["fpga/scripts/load.sh", "erase", "litefury", tmp])
        check(r.returncode != 0 and "neither program nor flash" in r.stdout, "load.sh refuses an unknown action")

    # What the 7-series loads pass to openFPGALoader (Debian's, installed by tools/deps.sh) names
    # boards, cables and parts it knows, and it has the SPI-over-JTAG bridge each part's flash
    # write needs.
    ofl = run(["openFPGALoader", "--list-boards"]) if shutil.which("openFPGALoader") else None
    check(ofl is not None and ofl.returncode == 0, "openFPGALoader is installed (tools/deps.sh)")
    if ofl is not None:
        known_boards = {line.split()[0] for line in ofl.stdout.splitlines()[1:] if line.split()}
        known_cables = {line.split()[0] for line in run(["openFPGALoader", "--list-cables"]).stdout.splitlines()[1:]
                        if line.split()}
        share = "/usr/share/openFPGALoader"
        bridges = os.listdir(share) if os.path.isdir(share) else []
        for name, b in db["boards"].items():
            if b["family"] != "s7":
                continue
            args = b["openfpgaloader"]
            check(b["default_cable"] in known_cables, f"{name}: openFPGALoader knows cable {b['default_cable']}")
            if "-b" in args:
                check(args[args.index("-b") + 1] in known_boards, f"{name}: openFPGALoader knows board {args[1]}")
                die = b["part"].split("-")[0][:8]  # e.g. xc7a200t: the board entry names its package
                check(any(f.startswith(f"spiOverJtag_{die}") for f in bridges),
                      f"{name}: openFPGALoader has a SPI-over-JTAG bridge for {die}")
            if "--fpga-part" in args:
                part = args[args.index("--fpga-part") + 1]
                check(b["part"].startswith(part), f"{name}: --fpga-part {part} is the board's part {b['part']}")
                check(f"spiOverJtag_{part}.bit.gz" in bridges, f"{name}: openFPGALoader has spiOverJtag_{part}")

    # Vivado settings from boards.toml.
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "config.tcl")
        r = run([py, "fpga/scripts/boards.py", "vivado-config", "acorn_cle215", "--gen", tmp, "--out", cfg])
        text = open(cfg).read() if r.returncode == 0 else ""
        with open(os.path.join(ROOT, "spec", "abi.toml"), "rb") as f:
            ident = tomllib.load(f)["pci"]
        for line in ("set part {xc7a200tfbg484-3}", "set top {sgpu_s7_board}",
                     f"set pci_vendor_id {ident['vendor_id']:04x}", f"set pci_device_id {ident['device_id']:04x}",
                     f"set pci_class_code {ident['class_code']:06x}", "sgpu_litepcie_s7.v", "pcie_s7.tcl",
                     "acorn_cle215.xdc", "set bar0_kib 4"):
            check(line in text, f"vivado config has '{line}'")
        check("fpga/stubs" not in text.split("set stubs")[0], "the Vivado sources have no black boxes")

    # The identity has one owner: a board database that sets it too is refused.
    with tempfile.TemporaryDirectory() as tmp:
        shadow = os.path.join(tmp, "fpga", "scripts")
        os.makedirs(shadow)
        os.makedirs(os.path.join(tmp, "spec"))
        for rel in ("fpga/scripts/boards.py", "spec/abi.toml"):
            with open(os.path.join(ROOT, rel)) as src, open(os.path.join(tmp, rel), "w") as dst:
                dst.write(src.read())
        with open(os.path.join(ROOT, "fpga", "boards.toml")) as src:
            db = src.read().replace("[pci]\n", "[pci]\ndevice_id = 0x1234\n", 1)
        with open(os.path.join(tmp, "fpga", "boards.toml"), "w") as dst:
            dst.write(db)
        r = run([py, os.path.join(shadow, "boards.py"), "list"])
        check(r.returncode != 0 and "device_id" in r.stderr and "spec/abi.toml" in r.stderr,
              "a PCI ID in fpga/boards.toml is refused (spec/abi.toml owns it)")

    # The IP port-list check catches a difference.
    with tempfile.TemporaryDirectory() as tmp:
        ip = os.path.join(tmp, "ip_stub.v")
        with open(ip, "w") as f:
            f.write("module pcie_s7(a);\n  input [63:0]s_axis_tx_tdata;\nendmodule\n")
        r = run([py, "fpga/scripts/check_stub.py", "--ip", ip, "--ours", "fpga/stubs/pcie_s7.sv"])
        check(r.returncode != 0 and "s_axis_tx_tdata" in r.stderr and "only in fpga/stubs/pcie_s7.sv" in r.stderr,
              "check_stub reports a changed width and missing ports")
        r = run([py, "fpga/scripts/check_stub.py", "--ip", "fpga/stubs/xdma_0.sv", "--ours", "fpga/stubs/xdma_0.sv"])
        check(r.returncode == 0, "check_stub accepts an identical list")

    if FAILS:
        sys.exit(f"{len(FAILS)} failed")


if __name__ == "__main__":
    main()
