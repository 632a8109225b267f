#!/usr/bin/env bash
# Brings a PCIe card back after its FPGA was reloaded (JTAG load or flash reboot): the link
# went down with the old design, so the OS still has the old device. Remove it, pulse a
# secondary bus reset on the upstream port, rescan, as Corundum's mqnic-fw does.
#   rescan.sh <domain:bus:dev.fn>        (root; needs setpci from pciutils)
#
# Caveats (docs/boards.md, "Rescans"):
#  * it works only if the card was enumerated at boot and the new design asks for the same BARs
#    (same sizes); otherwise the bridge's windows do not fit: warm-reboot instead;
#  * some hosts escalate the link drop to a fatal error (AER, surprise-down): use pci=noaer or
#    disable the upstream port's surprise-down reporting, or reboot;
#  * a driver bound to the card (vfio-pci, ...) is unbound first and must be bound again;
#  * the design must be loaded within the root port's completion timeout of the last access.
set -euo pipefail
bdf=${1:?usage: rescan.sh <domain:bus:dev.fn>}
[[ $bdf == *:*:*.* ]] || bdf="0000:$bdf"
dev=/sys/bus/pci/devices/$bdf
[ "$(id -u)" -eq 0 ] || { echo "rescan: needs root"; exit 1; }
[ -e "$dev" ] || { echo "rescan: no device $bdf (lspci -D lists the bus); if it vanished, rescan the bus: echo 1 > /sys/bus/pci/rescan"; exit 1; }
command -v setpci >/dev/null || { echo "rescan: setpci is missing (apt-get install pciutils)"; exit 1; }
port=$(basename "$(dirname "$(readlink -f "$dev")")")
[[ $port == *:*:*.* ]] || { echo "rescan: $bdf has no upstream PCI bridge ($port): reboot instead"; exit 1; }

if [ -e "$dev/driver" ]; then
  echo "rescan: unbinding $(basename "$(readlink -f "$dev/driver")") from $bdf"
  echo "$bdf" > "$dev/driver/unbind"
fi
echo "rescan: removing $bdf"
echo 1 > "$dev/remove"
sleep 0.2
ctrl=$(setpci -s "$port" BRIDGE_CONTROL)
echo "rescan: secondary bus reset on $port"
setpci -s "$port" BRIDGE_CONTROL="$(printf %04x $((0x$ctrl | 0x40)))"
sleep 0.01
setpci -s "$port" BRIDGE_CONTROL="$ctrl"
sleep 0.5
for i in 1 2 3 4 5; do
  echo 1 > "/sys/bus/pci/devices/$port/rescan"
  if [ -e "$dev" ]; then
    echo "rescan: $bdf is back:"
    lspci -s "$bdf" -vv | sed -n '1p;/LnkSta:/p;/Control:/p'
    exit 0
  fi
  sleep 1
done
echo "rescan: $bdf did not come back after 5 rescans: check the link LED, then warm-reboot (docs/boards.md)"
exit 1
