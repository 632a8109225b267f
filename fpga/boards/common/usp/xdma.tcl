# XDMA / DMA-Bridge Subsystem for PCI Express (PG195, bridge: PG194) in AXI Bridge mode as the
# usp shell uses it, created by fpga/vivado/build.tcl (variables from config.tcl): module xdma_0
# on the Alveo U50's PCIE4C block with GTY quads 227/226 (lanes 0-7 of the x16 edge), Gen3 x8,
# 256-bit AXI at 250 MHz, 64-bit AXI addresses.
#  * PCIe BAR0 (bar0_kib KiB, 32-bit) -> m_axib, translation 0: AXI address = BAR offset.
#  * One AXI BAR for s_axib: [0, 2^48) -> PCIe address + 0: AXI address = bus address, so the
#    device reaches 2^48 (the shell's AddrBits, reported in CAP_BUS.addr_bits).
#  * MSI, one vector (usr_irq_req[0]); no MSI-X, no legacy interrupt.
# Parameter names follow the XDMA 4.1 customisation in Vivado 2023.x; fpga/stubs/xdma_0.sv is
# the port list this produces (checked by build.tcl).
create_ip -vendor xilinx.com -library ip -name xdma -module_name xdma_0 -dir $out/ip
set_property -dict [list \
  CONFIG.functional_mode             {AXI_Bridge} \
  CONFIG.mode_selection              {Advanced} \
  CONFIG.device_port_type            {PCI_Express_Endpoint_device} \
  CONFIG.pcie_blk_locn               {PCIE4C_X1Y0} \
  CONFIG.en_gt_selection             {true} \
  CONFIG.select_quad                 {GTY_Quad_227} \
  CONFIG.pl_link_cap_max_link_width  {X8} \
  CONFIG.pl_link_cap_max_link_speed  {8.0_GT/s} \
  CONFIG.ref_clk_freq                {100_MHz} \
  CONFIG.axi_data_width              {256_bit} \
  CONFIG.axisten_freq                {250} \
  CONFIG.axi_addr_width              {64} \
  CONFIG.pf0_device_id               $pci_device_id \
  CONFIG.pf0_revision_id             $pci_revision \
  CONFIG.pf0_subsystem_vendor_id     $pci_subsystem_vendor_id \
  CONFIG.pf0_subsystem_id            $pci_subsystem_id \
  CONFIG.pf0_class_code              $pci_class_code \
  CONFIG.pf0_bar0_64bit              {false} \
  CONFIG.pf0_bar0_prefetchable       {false} \
  CONFIG.pf0_bar0_scale              {Kilobytes} \
  CONFIG.pf0_bar0_size               $bar0_kib \
  CONFIG.pciebar2axibar_0            {0x0000000000000000} \
  CONFIG.en_axi_slave_if             {true} \
  CONFIG.axibar_num                  {1} \
  CONFIG.BASEADDR                    {0x0000000000000000} \
  CONFIG.HIGHADDR                    {0x0000FFFFFFFFFFFF} \
  CONFIG.axibar2pciebar_0            {0x0000000000000000} \
  CONFIG.c_s_axi_supports_narrow_burst {false} \
  CONFIG.pf0_msi_enabled             {true} \
  CONFIG.pf0_msix_enabled            {false} \
  CONFIG.pf0_interrupt_pin           {NONE} \
  CONFIG.plltype                     {QPLL1} \
] [get_ips xdma_0]
