#!/usr/bin/env python3
"""Runs the pcie contract test inside a QEMU (TCG) guest with an emulated IOMMU.

The guest is a Debian kernel (tools/vm/fetch_kernel.sh) booted straight into an initramfs built
here: busybox, the VFIO modules, the test binary and the shared libraries it links. QEMU gives it
an Intel IOMMU and QEMU's `edu` test devices (one for VFIO, one for the no-IOMMU path, one behind a
PCI bridge next to an e1000 for the group test). The test talks to the real kernel interfaces:
sysfs, vfio-pci, the type 1 IOMMU, MSI to an eventfd, hugepages and pagemap.

Exit status: the test's own (0 = pass), or 77 when something it needs is missing; the reason is
printed, so CTest shows why it skipped.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def shared_libraries(binary):
    """The files the dynamic loader maps for `binary`, loader included."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout  # "not a dynamic executable": none
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            path = parts[parts.index("=>") + 1]
            if path.startswith("/"):
                libs.append(path)
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def build_initramfs(work, kernel_dir, binary, busybox, init_script, test_args):
    root = os.path.join(work, "root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "dev", "proc", "sys", "lib/modules", "tmp"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy2(busybox, os.path.join(root, "bin/busybox"))
    shutil.copy2(init_script, os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    for ko in os.listdir(os.path.join(kernel_dir, "modules")):
        shutil.copy2(os.path.join(kernel_dir, "modules", ko), os.path.join(root, "lib/modules", ko))
    shutil.copy2(binary, os.path.join(root, "sgpu_pcie_vm_contract"))
    for lib in shared_libraries(binary) + shared_libraries(busybox):
        dest = os.path.join(root, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.realpath(lib), dest)
    with open(os.path.join(root, "test-args"), "w") as f:
        f.write(" ".join(["--use-colour", "no"] + test_args))
    image = os.path.join(work, "initrd.cpio")
    files = subprocess.run(["find", "."], cwd=root, check=True, capture_output=True, text=True).stdout
    with open(image, "wb") as out:
        subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=root, input=files.encode(), stdout=out, check=True)
    return image


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the contract test executable")
    ap.add_argument("--kernel-dir", required=True, help="from tools/vm/fetch_kernel.sh")
    ap.add_argument("--work", required=True, help="scratch directory (initramfs, console log)")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds before the guest is killed")
    ap.add_argument("test_args", nargs="*", help="passed to the test binary in the guest")
    a = ap.parse_args()

    qemu = shutil.which("qemu-system-x86_64")
    if not qemu:
        skip("qemu-system-x86_64 is not installed (Debian package qemu-system-x86; `make deps` installs it)")
    if not os.path.exists(os.path.join(a.kernel_dir, "vmlinuz")):
        skip(f"no guest kernel in {a.kernel_dir} (`make deps` fetches it: tools/vm/fetch_kernel.sh)")
    busybox = "/bin/busybox"
    if not os.path.exists(busybox):
        skip("no busybox (Debian package busybox-static; `make deps` installs it)")
    if not shutil.which("cpio"):
        skip("cpio is not installed (Debian package cpio; `make deps` installs it)")

    os.makedirs(a.work, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    t0 = time.monotonic()
    image = build_initramfs(a.work, a.kernel_dir, a.binary, busybox, os.path.join(here, "init.sh"), a.test_args)
    # no_timer_check: under TCG on a busy host the kernel's early check of the IO-APIC timer can
    # miss its window and panic ("timer doesn't work through Interrupt-remapped IO-APIC").
    cmd = [
        qemu, "-M", "q35,accel=tcg,kernel-irqchip=split", "-cpu", "max", "-smp", "1", "-m", "256",
        "-nographic", "-no-reboot", "-nic", "none",
        "-kernel", os.path.join(a.kernel_dir, "vmlinuz"), "-initrd", image,
        "-append", "console=ttyS0 intel_iommu=on iommu=pt panic=-1 no_timer_check quiet loglevel=4",
        "-device", "intel-iommu,intremap=on",
        "-device", "edu,addr=04.0",                       # VFIO: config, BAR, DMA, MSI, errors
        "-device", "edu,addr=05.0",                       # left to sysfs: the no-IOMMU path
        "-device", "pci-bridge,id=br1,chassis_nr=1,addr=06.0",
        "-device", "edu,bus=br1,addr=01.0",               # shares its IOMMU group with ...
        "-device", "e1000,bus=br1,addr=02.0",             # ... a NIC the kernel driver takes
    ]
    log_path = os.path.join(a.work, "console.log")
    print(f"VM: {os.path.basename(qemu)} TCG, kernel {open(os.path.join(a.kernel_dir, 'package')).read().strip()}, "
          f"initramfs {os.path.getsize(image) >> 20} MiB; console in {log_path}", flush=True)
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=a.timeout)
        console = proc.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        console = (e.stdout or b"").decode(errors="replace")
        with open(log_path, "w") as f:
            f.write(console)
        print(console[-6000:])
        print(f"FAIL: the guest did not finish within {a.timeout:.0f} s")
        return 1
    with open(log_path, "w") as f:
        f.write(console)
    wall = time.monotonic() - t0
    code = None
    for line in console.splitlines():
        if line.startswith("SGPU-VM-EXIT "):
            code = int(line.split()[1])
    if code is None:
        print(console[-6000:])
        print(f"FAIL: the guest stopped without reporting a result (QEMU exit {proc.returncode}, {wall:.1f} s)")
        return 1
    # The test's own report (Catch2) and the guest's notes, without the kernel's boot chatter.
    report = [l for l in console.splitlines() if not l.startswith("[")]
    print("\n".join(report[-200:] if code else [l for l in report if l.startswith(("SGPU-VM", "All tests", "test cases"))]))
    print(f"VM test {'passed' if code == 0 else 'FAILED'}: boot + test + power-off in {wall:.1f} s wall")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
