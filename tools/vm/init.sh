#!/bin/busybox sh
# /init of the VM test's initramfs: mount the kernel's file systems, load VFIO (and the drivers the
# error tests bind), reserve hugepages for the no-IOMMU path, run the contract test, power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in irqbypass vfio vfio_virqfd vfio_iommu_type1 vfio-pci-core vfio-pci pci-stub e1000; do
  insmod /lib/modules/$m.ko || echo "SGPU-VM: insmod $m failed"
done
echo 8 > /proc/sys/vm/nr_hugepages
echo "SGPU-VM: kernel $(uname -r), $(ls /sys/bus/pci/devices | wc -l) PCI functions, IOMMU groups: $(ls /sys/kernel/iommu_groups | wc -l)"
/sgpu_pcie_vm_contract $(cat /test-args 2>/dev/null)
echo "SGPU-VM-EXIT $?"
poweroff -f
