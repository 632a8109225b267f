#!/usr/bin/env python3
"""The board database (fpga/boards.toml) for the fpga Makefile, the Vivado flow and the board
checks of `make test`.

  boards.py list                              the boards: part, bridge, link, status
  boards.py get BOARD KEY                     one value (part, family, top, ...), for make
  boards.py files BOARD --gen DIR [--stubs]   the design's sources in compile order: the core and
                                              shell FuseSoC cores (rtl/*.core), the generated
                                              bridge core in DIR, the board top; --stubs adds the
                                              vendor IP black boxes (checks without Vivado). The
                                              macro headers they include are not in the list
                                              (they are the cores' include files)
  boards.py vivado-config BOARD --gen DIR --out FILE
                                              the Tcl settings fpga/vivado/build.tcl reads
  boards.py generate BOARD --gen DIR          generates the family's bridge core into DIR
  boards.py pci-header --out FILE             the configuration-space values as a C++ header
                                              (the co-simulation's hard-block model)
  boards.py check                             every board's family, files and capacity exist

The PCI identity (vendor ID, device ID, class code) is the softgpu's, read from spec/abi.toml
[pci] (the source of sgpu_abi_pkg::Pci* and sgpu::abi::pci); the rest of configuration space
(revision, subsystem IDs, BAR0 size) is fpga/boards.toml [pci].

File lists come from the FuseSoC core files (the ones others use to pull softgpu in); a test in
`make test` checks those against rtl/CMakeLists.txt, so the three never drift apart.
"""
import argparse
import os
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOARDS = os.path.join(ROOT, "fpga", "boards.toml")
ABI = os.path.join(ROOT, "spec", "abi.toml")
CORES = {"softgpu:softgpu:core": "rtl/softgpu.core",
         "softgpu:softgpu:shell_common": "rtl/softgpu_shell_common.core",
         "softgpu:softgpu:shell_s7": "rtl/softgpu_shell_s7.core",
         "softgpu:softgpu:shell_usp": "rtl/softgpu_shell_usp.core"}
GENERATED = {"s7": "sgpu_litepcie_s7.v"}


def load():
    with open(BOARDS, "rb") as f:
        db = tomllib.load(f)
    with open(ABI, "rb") as f:
        identity = tomllib.load(f)["pci"]
    clash = sorted(set(identity) & set(db["pci"]))
    if clash:
        sys.exit(f"boards: fpga/boards.toml [pci] sets {', '.join(clash)}, which spec/abi.toml [pci] owns")
    db["pci"] = dict(db["pci"], **identity)
    return db


def board(db, name):
    if name not in db["boards"]:
        sys.exit(f"boards: no board '{name}' (known: {', '.join(sorted(db['boards']))})")
    b = dict(db["boards"][name])
    b["id"] = name
    b["family_info"] = db["families"][b["family"]]
    return b


def core_files(vlnv, seen=None, headers=False):
    """Sources of a core and its dependencies (dependencies first), paths from the repo root;
    with `headers`, its include files (`is_include_file`) instead."""
    import yaml  # in the environment `make deps` creates (PyYAML comes with LiteX)
    seen = seen if seen is not None else set()
    if vlnv in seen or vlnv not in CORES:
        return []
    seen.add(vlnv)
    path = os.path.join(ROOT, CORES[vlnv])
    with open(path) as f:
        core = yaml.safe_load(f)
    out = []
    for fs in core["filesets"].values():
        for dep in fs.get("depend", []):
            out += core_files(dep, seen, headers)
        for entry in fs.get("files", []):
            name = next(iter(entry)) if isinstance(entry, dict) else entry
            if name.endswith(".vlt"):
                continue  # Verilator-only
            attrs = entry[name] if isinstance(entry, dict) else None
            if bool((attrs or {}).get("is_include_file")) != headers:
                continue
            out.append(os.path.relpath(os.path.join(os.path.dirname(path), name), ROOT))
    return out


def design_files(b, gen_dir, stubs):
    fam = b["family_info"]
    files = core_files(fam["shell_core"])
    if b["family"] in GENERATED:
        files.append(os.path.join(gen_dir, GENERATED[b["family"]]))
    if stubs:
        files += fam["stubs"]
    files += fam["rtl"]
    return [f if os.path.isabs(f) else os.path.join(ROOT, f) for f in files]


def design_headers(b):
    """The include files (macro headers) the design's sources `include, as absolute paths."""
    return [os.path.join(ROOT, f) for f in core_files(b["family_info"]["shell_core"], headers=True)]


def cmd_list(db, _):
    rows = [("board", "family", "part", "bridge", "link", "status")]
    for name, b in db["boards"].items():
        fam = db["families"][b["family"]]
        rows.append((name, fam["title"], b["part"], fam["bridge"], b["link"], b["status"]))
    print(f"{len(db['boards'])} boards, {len({b['family'] for b in db['boards'].values()})} families "
          f"(fpga/boards.toml; docs/boards.md):\n")
    for r in rows:
        print(f"  {r[0]:<14} {r[1]:<20} {r[2]:<20} {r[4]}")
        if r is not rows[0]:
            print(f"  {'':<14} bridge: {r[3]}")
            print(f"  {'':<14} status: {r[5]}")
    print("\n  make -C fpga BOARD=<board> bitstream | program | flash;  make -C fpga rescan BDF=<bus:dev.fn>")


def cmd_get(db, a):
    b = board(db, a.board)
    v = b.get(a.key, b["family_info"].get(a.key))
    if v is None:
        sys.exit(f"boards: board '{a.board}' has no '{a.key}'")
    print(" ".join(map(str, v)) if isinstance(v, list) else v)


def cmd_files(db, a):
    for f in design_files(board(db, a.board), a.gen, a.stubs):
        print(f)


def tcl_list(items):
    return "[list " + " ".join("{" + i + "}" for i in items) + "]"


def cmd_vivado_config(db, a):
    b = board(db, a.board)
    fam = b["family_info"]
    pci = db["pci"]
    srcs = design_files(b, a.gen, stubs=False)
    xdc = [os.path.join(ROOT, x) for x in fam["xdc"] + [b["xdc"]]]
    ip = [os.path.join(ROOT, x) for x in fam["ip_tcl"]]
    flash = b.get("flash", {})
    lines = [
        f"# Generated by fpga/scripts/boards.py for {b['id']} ({b['name']}). Do not edit.",
        f"set board {{{b['id']}}}",
        f"set family {{{b['family']}}}",
        f"set part {{{b['part']}}}",
        f"set top {{{fam['top']}}}",
        f"set sources {tcl_list(srcs)}",
        f"set include_dirs {tcl_list(sorted({os.path.dirname(h) for h in design_headers(b)}))}",
        f"set xdc_files {tcl_list(xdc)}",
        f"set ip_tcl {tcl_list(ip)}",
        f"set ip_modules {tcl_list(fam['ip_modules'])}",
        f"set stubs {tcl_list([os.path.join(ROOT, s) for s in fam['stubs']])}",
        f"set repo {{{ROOT}}}",
        f"set pci_vendor_id {pci['vendor_id']:04x}",
        f"set pci_device_id {pci['device_id']:04x}",
        f"set pci_class_code {pci['class_code']:06x}",
        f"set pci_revision {pci['revision']:02x}",
        f"set pci_subsystem_vendor_id {pci['subsystem_vendor_id']:04x}",
        f"set pci_subsystem_id {pci['subsystem_id']:04x}",
        f"set bar0_kib {pci['bar0_bytes'] // 1024}",
        f"set flash_interface {{{flash.get('interface', 'SPIx4')}}}",
        f"set flash_size_mb {flash.get('size_mb', 16)}",
        f"set flash_user_offset {flash.get('user_offset', 0):#x}",
        f"set flash_part {{{flash.get('part', '')}}}",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


def cmd_generate(db, a):
    b = board(db, a.board)
    if b["family"] != "s7":
        return  # XDMA is created by Vivado from its Tcl
    os.makedirs(a.gen, exist_ok=True)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "fpga", "litepcie", "gen_tlp_core.py"),
                        "--out", os.path.join(a.gen, GENERATED["s7"]), "--data-width", "128",
                        "--tags", str(b["family_info"]["read_tags"]), "--address-width", "64",
                        "--bar0-size", str(db["pci"]["bar0_bytes"])])
    if r.returncode != 0:
        sys.exit(f"boards: generating the LitePCIe transaction layer for {a.board} failed")


def cmd_pci_header(db, a):
    pci = db["pci"]
    text = f"""// Generated by fpga/scripts/boards.py from spec/abi.toml [pci] and fpga/boards.toml [pci]. Do not edit.
// What the boards' PCIe hard blocks present in configuration space (pcie_s7.tcl, xdma.tcl get
// the same values through boards.py vivado-config).
#pragma once

#include <cstdint>

namespace sgpu::board::hard_block {{
inline constexpr std::uint16_t kVendorId = 0x{pci['vendor_id']:04x};
inline constexpr std::uint16_t kDeviceId = 0x{pci['device_id']:04x};
inline constexpr std::uint32_t kClassCode = 0x{pci['class_code']:06x};
inline constexpr std::uint8_t kRevision = 0x{pci['revision']:02x};
inline constexpr std::uint16_t kSubsystemVendorId = 0x{pci['subsystem_vendor_id']:04x};
inline constexpr std::uint16_t kSubsystemId = 0x{pci['subsystem_id']:04x};
inline constexpr std::uint32_t kBar0Bytes = {pci['bar0_bytes']};
}}  // namespace sgpu::board::hard_block
"""
    old = open(a.out).read() if os.path.exists(a.out) else None
    if old != text:  # unchanged: keep the time stamp, nothing recompiles
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)


def cmd_check(db, _):
    bad = []
    for name, b in db["boards"].items():
        fam = db["families"].get(b.get("family"))
        if fam is None:
            bad.append(f"{name}: unknown family {b.get('family')}")
            continue
        for key in ("part", "link", "xdc", "capacity", "status", "name"):
            if key not in b:
                bad.append(f"{name}: no {key}")
        for f in [b.get("xdc", "")] + fam["rtl"] + fam["xdc"] + fam["ip_tcl"] + fam["stubs"]:
            if f and not os.path.exists(os.path.join(ROOT, f)):
                bad.append(f"{name}: missing {f}")
    pci = db["pci"]
    for key, bits in (("revision", 8), ("subsystem_vendor_id", 16), ("subsystem_id", 16)):
        if not 0 <= pci.get(key, -1) < (1 << bits):
            bad.append(f"pci.{key} missing or wider than {bits} bits")
    bar0 = pci.get("bar0_bytes", 0)
    if bar0 < 4096 or bar0 & (bar0 - 1):
        bad.append(f"pci.bar0_bytes {bar0} is not a power of two of at least 4096 (the register window)")
    if len({b["family"] for b in db["boards"].values()}) < 2:
        bad.append("fewer than two families")
    if bad:
        sys.exit("boards: " + "; ".join(bad))
    print(f"boards: {len(db['boards'])} boards in {len(db['families'])} families, all files present")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    sub.add_parser("check")
    g = sub.add_parser("get")
    g.add_argument("board")
    g.add_argument("key")
    f = sub.add_parser("files")
    f.add_argument("board")
    f.add_argument("--gen", required=True)
    f.add_argument("--stubs", action="store_true")
    v = sub.add_parser("vivado-config")
    v.add_argument("board")
    v.add_argument("--gen", required=True)
    v.add_argument("--out", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("board")
    gen.add_argument("--gen", required=True)
    h = sub.add_parser("pci-header")
    h.add_argument("--out", required=True)
    a = ap.parse_args()
    db = load()
    {"list": cmd_list, "get": cmd_get, "files": cmd_files, "vivado-config": cmd_vivado_config,
     "generate": cmd_generate, "pci-header": cmd_pci_header, "check": cmd_check}[a.cmd](db, a)


if __name__ == "__main__":
    main()
