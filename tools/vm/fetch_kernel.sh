#!/usr/bin/env bash
# Fetches the guest kernel for the VM test from Debian's archive: the image package that
# linux-image-amd64 currently points at, downloaded (not installed) and unpacked in part: the
# kernel and the modules the test loads (VFIO, irqbypass, pci-stub, e1000).
#
#   tools/vm/fetch_kernel.sh <dir>     -> <dir>/vmlinuz, <dir>/modules/*.ko, <dir>/package
set -euo pipefail

dest=${1:?usage: fetch_kernel.sh <dir>}
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$pkg" ] || { echo "fetch_kernel: apt knows no linux-image-amd64" >&2; exit 1; }
if [ -f "$dest/package" ] && [ "$(cat "$dest/package")" = "$pkg" ] && [ -f "$dest/vmlinuz" ]; then exit 0; fi

echo "deps: fetching the VM test's guest kernel ($pkg)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
(cd "$tmp" && apt-get download -qq "$pkg" 2>/dev/null)
rm -rf "$dest"
mkdir -p "$dest/modules" "$tmp/root"
dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/root" --wildcards \
  './boot/vmlinuz-*' \
  './lib/modules/*/kernel/drivers/vfio/vfio.ko' \
  './lib/modules/*/kernel/drivers/vfio/vfio_iommu_type1.ko' \
  './lib/modules/*/kernel/drivers/vfio/vfio_virqfd.ko' \
  './lib/modules/*/kernel/drivers/vfio/pci/vfio-pci-core.ko' \
  './lib/modules/*/kernel/drivers/vfio/pci/vfio-pci.ko' \
  './lib/modules/*/kernel/virt/lib/irqbypass.ko' \
  './lib/modules/*/kernel/drivers/pci/pci-stub.ko' \
  './lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/e1000.ko'
cp "$tmp"/root/boot/vmlinuz-* "$dest/vmlinuz"
find "$tmp/root/lib/modules" -name '*.ko' -exec cp {} "$dest/modules/" \;
echo "$pkg" > "$dest/package"
